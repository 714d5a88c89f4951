"""CA and serving-certificate generation, and ``caBundle`` injection into webhook manifests.

Why draguard makes its own certificates: the API server only calls a webhook over TLS and only
trusts the CA given in the webhook configuration's ``caBundle``.  ``draguard certs`` produces a
CA plus a serving certificate for ``<service>.<namespace>.svc`` in one step and can write the CA
into the manifests, so the Secret, the served certificate and the ``caBundle`` come from the
same run (mismatches between them are the classic rotation failure).

The CA lives ten times longer than the leaf by default, so renewing the leaf (the frequent
operation) never requires touching ``caBundle`` (the classic outage is an expired CA nobody renewed).
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import ipaddress
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

__all__ = [
    "CertBundle",
    "add_certs_arguments",
    "describe_certificate",
    "generate_bundle",
    "generate_ca",
    "generate_leaf",
    "patch_ca_bundle",
    "run_certs",
    "service_dns_names",
    "write_atomic",
    "write_bundle",
]

CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
CA_FILE = "ca.crt"
WEBHOOK_KINDS = ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration")
_BACKDATE = dt.timedelta(minutes=5)  # tolerate small clock skew between node and API server


@dataclass(frozen=True)
class CertBundle:
    """PEM bytes of one generation: the CA certificate, the leaf certificate and the leaf key."""

    ca_cert: bytes
    ca_key: bytes
    cert: bytes
    key: bytes

    @property
    def ca_bundle_b64(self) -> str:
        """The value a webhook configuration's ``clientConfig.caBundle`` wants."""
        return base64.b64encode(self.ca_cert).decode("ascii")


def service_dns_names(service: str, namespace: str) -> list[str]:
    """The names the API server may use to reach ``service`` in ``namespace``."""
    return [
        service,
        f"{service}.{namespace}",
        f"{service}.{namespace}.svc",
        f"{service}.{namespace}.svc.cluster.local",
    ]


def _key() -> ec.EllipticCurvePrivateKey:
    # P-256: fast handshakes, accepted by every Go TLS stack the API server uses.
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _san_entries(names: Iterable[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    seen: set[str] = set()
    for name in names:
        name = name.strip()
        if not name or name in seen:
            continue
        seen.add(name)
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(name)))
        except ValueError:
            out.append(x509.DNSName(name))
    return out


def _load_ca(ca_cert_pem: bytes, ca_key_pem: bytes) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    cert = x509.load_pem_x509_certificate(ca_cert_pem)
    key = serialization.load_pem_private_key(ca_key_pem, password=None)
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise ValueError("the CA key must be an EC key")
    return cert, key


def _key_usage(*, ca: bool) -> x509.KeyUsage:
    """Signatures only; a CA also signs certificates and revocation lists."""
    return x509.KeyUsage(
        digital_signature=True, content_commitment=False, key_encipherment=False,
        data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
        encipher_only=False, decipher_only=False,
    )


def generate_ca(common_name: str, days: int, now: dt.datetime | None = None) -> tuple[bytes, bytes]:
    """A self-signed CA (certificate PEM, key PEM) valid for ``days`` days."""
    now = now or dt.datetime.now(dt.UTC)
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(_key_usage(ca=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def generate_leaf(
    ca_cert_pem: bytes,
    ca_key_pem: bytes,
    dns_names: Sequence[str],
    days: int,
    now: dt.datetime | None = None,
    *,
    client: bool = False,
) -> tuple[bytes, bytes]:
    """A serving certificate (PEM, key PEM) for ``dns_names`` (DNS names or IP addresses).

    ``client=True`` makes a client certificate instead (``clientAuth`` usage), for mutual TLS.
    """
    if not dns_names:
        raise ValueError("a serving certificate needs at least one name")
    now = now or dt.datetime.now(dt.UTC)
    ca_cert, ca_key = _load_ca(ca_cert_pem, ca_key_pem)
    key = _key()
    sans = _san_entries(dns_names)
    first_dns = next((n for n in dns_names if not _is_ip(n)), dns_names[0])
    not_after = min(now + dt.timedelta(days=days), ca_cert.not_valid_after_utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, first_dns[:64])]))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - _BACKDATE)
        .not_valid_after(not_after)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_key_usage(ca=False), critical=True)
        .add_extension(
            x509.ExtendedKeyUsage(
                [ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH]
            ),
            critical=False,
        )
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def generate_bundle(
    service: str,
    namespace: str,
    *,
    extra_sans: Sequence[str] = (),
    days: int = 365,
    ca_days: int | None = None,
    ca: tuple[bytes, bytes] | None = None,
) -> CertBundle:
    """A CA (new unless ``ca`` = (cert PEM, key PEM) is given) and a leaf for the service names."""
    ca_cert, ca_key = ca or generate_ca(f"draguard-ca ({namespace}/{service})", ca_days or days * 10)
    names = [*service_dns_names(service, namespace), *extra_sans]
    cert, key = generate_leaf(ca_cert, ca_key, names, days)
    return CertBundle(ca_cert=ca_cert, ca_key=ca_key, cert=cert, key=key)


def write_atomic(path: Path, data: bytes, mode: int) -> None:
    """Write via a temporary file and rename, so a reloading server never reads half a file."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.chmod(tmp, mode)
    os.replace(tmp, path)


def write_bundle(bundle: CertBundle, out_dir: Path, *, write_ca_key: bool = True) -> dict[str, Path]:
    """Write ``tls.crt``, ``tls.key``, ``ca.crt`` (and ``ca.key``) into ``out_dir``.

    The key is written before the certificate: a reloader that polls the certificate file sees
    the new certificate only once its key is already in place.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "key": out_dir / KEY_FILE,
        "cert": out_dir / CERT_FILE,
        "ca": out_dir / CA_FILE,
    }
    write_atomic(paths["key"], bundle.key, 0o600)
    write_atomic(paths["cert"], bundle.cert, 0o644)
    write_atomic(paths["ca"], bundle.ca_cert, 0o644)
    if write_ca_key:
        paths["ca_key"] = out_dir / "ca.key"
        write_atomic(paths["ca_key"], bundle.ca_key, 0o600)
    return paths


# ------------------------------------------------------------------ caBundle injection
_DOC_SPLIT = re.compile(r"^---[ \t]*(?:#.*)?$", re.MULTILINE)
_CLIENT_CONFIG = re.compile(r"^(?P<indent>[ \t]*)(?P<dash>- )?clientConfig:[ \t]*$")
_CA_BUNDLE = re.compile(r"^(?P<indent>[ \t]*)caBundle:.*$")


def _webhook_docs_count(text: str) -> int:
    count = 0
    for doc in yaml.safe_load_all(text):
        if isinstance(doc, dict) and doc.get("kind") in WEBHOOK_KINDS:
            count += len(doc.get("webhooks") or [])
    return count


def _patch_doc_text(doc: str, ca_b64: str) -> str:
    """Set ``caBundle`` under every ``clientConfig:`` of one YAML document, keeping comments."""
    lines = doc.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        out.append(line)
        m = _CLIENT_CONFIG.match(line)
        i += 1
        if not m:
            continue
        base = len(m.group("indent")) + (2 if m.group("dash") else 0)
        # the block is every following line indented deeper than `clientConfig:` (or blank)
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > base):
            block.append(lines[i])
            i += 1
        child_indent = next(
            (len(b) - len(b.lstrip()) for b in block if b.strip() and not b.lstrip().startswith("#")),
            base + 2,
        )
        replaced = False
        for b in block:
            cm = _CA_BUNDLE.match(b)
            if cm and len(cm.group("indent")) == child_indent:
                out.append(f"{' ' * child_indent}caBundle: {ca_b64}")
                replaced = True
            else:
                out.append(b)
        if not replaced:
            out.insert(len(out) - len(block), f"{' ' * child_indent}caBundle: {ca_b64}")
    return "\n".join(out)


def _patch_structurally(text: str, ca_b64: str) -> str:
    """Fallback for layouts the line editor does not understand (flow style, odd indents)."""
    docs = list(yaml.safe_load_all(text))
    for doc in docs:
        if isinstance(doc, dict) and doc.get("kind") in WEBHOOK_KINDS:
            for hook in doc.get("webhooks") or []:
                hook.setdefault("clientConfig", {})["caBundle"] = ca_b64
    return yaml.safe_dump_all(docs, sort_keys=False)


def _all_patched(text: str, ca_b64: str) -> bool:
    for doc in yaml.safe_load_all(text):
        if isinstance(doc, dict) and doc.get("kind") in WEBHOOK_KINDS:
            for hook in doc.get("webhooks") or []:
                if (hook.get("clientConfig") or {}).get("caBundle") != ca_b64:
                    return False
    return True


def patch_ca_bundle(text: str, ca_b64: str) -> tuple[str, int]:
    """Return ``text`` with ``caBundle`` set on every webhook, and how many webhooks were set.

    Comments and layout survive (the ``failurePolicy`` rationale lives in comments); only
    documents of the webhook-configuration kinds are touched.
    """
    count = _webhook_docs_count(text)
    if count == 0:
        return text, 0
    parts = _DOC_SPLIT.split(text)
    seps = _DOC_SPLIT.findall(text)
    patched_parts: list[str] = []
    for part in parts:
        try:
            doc = yaml.safe_load(part)
        except yaml.YAMLError:
            doc = None
        if isinstance(doc, dict) and doc.get("kind") in WEBHOOK_KINDS:
            patched_parts.append(_patch_doc_text(part, ca_b64))
        else:
            patched_parts.append(part)
    result = patched_parts[0]
    for sep, part in zip(seps, patched_parts[1:], strict=True):
        result += sep + part
    if not _all_patched(result, ca_b64):
        result = _patch_structurally(text, ca_b64)
    return result, count


# ------------------------------------------------------------------ CLI
def add_certs_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``draguard certs`` (README "The CLI")."""
    parser.add_argument("--service", required=True, help="Service name the API server calls")
    parser.add_argument("--namespace", required=True, help="namespace of the Service")
    parser.add_argument("--out", default="certs", help="output folder (default: certs/)")
    parser.add_argument("--days", type=int, default=365, help="validity of the serving certificate")
    parser.add_argument(
        "--ca-days", type=int, default=None, help="validity of the CA (default: 10 × --days)"
    )
    parser.add_argument(
        "--san", action="append", default=[], metavar="NAME|IP", help="extra subject alternative name"
    )
    parser.add_argument(
        "--reuse-ca",
        action="store_true",
        help="sign with the existing ca.crt/ca.key in --out (renew the leaf, keep caBundle valid)",
    )
    parser.add_argument(
        "--patch", nargs="+", default=[], metavar="MANIFEST", help="set caBundle in these manifest files"
    )


def run_certs(args: argparse.Namespace) -> int:
    """``draguard certs``: 0 on success, 2 on a usage or I/O problem (message on stderr)."""
    out = Path(args.out)
    if args.days <= 0 or (args.ca_days is not None and args.ca_days < args.days):
        print("draguard certs: --days must be positive and --ca-days at least --days", file=sys.stderr)
        return 2
    ca: tuple[bytes, bytes] | None = None
    try:
        if getattr(args, "reuse_ca", False):
            ca = ((out / CA_FILE).read_bytes(), (out / "ca.key").read_bytes())
        bundle = generate_bundle(
            args.service, args.namespace, extra_sans=args.san, days=args.days, ca_days=args.ca_days, ca=ca
        )
        paths = write_bundle(bundle, out)
    except (OSError, ValueError) as exc:
        print(f"draguard certs: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {paths['cert']}, {paths['key']}, {paths['ca']}")
    for manifest in args.patch:
        path = Path(manifest)
        try:
            text = path.read_text()
            patched, count = patch_ca_bundle(text, bundle.ca_bundle_b64)
        except (OSError, yaml.YAMLError) as exc:
            print(f"draguard certs: cannot patch {manifest}: {exc}", file=sys.stderr)
            return 2
        if count == 0:
            print(f"draguard certs: {manifest}: no webhook configuration found", file=sys.stderr)
            return 2
        if patched != text:
            path.write_text(patched)
        print(f"patched caBundle of {count} webhook(s) in {manifest}")
    return 0


def describe_certificate(pem: bytes) -> dict[str, Any]:
    """Serial, names and expiry of a PEM certificate (used by tests, logs and readiness)."""
    cert = x509.load_pem_x509_certificate(pem)
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = [str(v) for v in san.get_values_for_type(x509.DNSName)] + [
            str(v) for v in san.get_values_for_type(x509.IPAddress)
        ]
    except x509.ExtensionNotFound:
        names = []
    return {"serial": cert.serial_number, "names": names, "not_after": cert.not_valid_after_utc}
