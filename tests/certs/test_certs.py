"""draguard certs: the certificates verify for the service names, and caBundle injection keeps the file."""

from __future__ import annotations

import argparse
import base64
import ipaddress
import socket
import ssl
import stat
import threading
from pathlib import Path

import pytest
import yaml
from cryptography import x509
from draguard.certs import (
    add_certs_arguments,
    describe_certificate,
    generate_bundle,
    patch_ca_bundle,
    run_certs,
    service_dns_names,
    write_bundle,
)

MANIFEST = """\
# webhook configurations
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata:
  name: draguard
webhooks:
  # Fail: claims must be checked
  - name: claims.draguard.dev
    clientConfig:
      service:
        name: draguard
        namespace: draguard
        path: /validate
        port: 443
      caBundle: ""   # filled in by draguard certs --patch
    failurePolicy: Fail
  - name: slices.draguard.dev
    clientConfig:
      service: {name: draguard, namespace: draguard, path: /validate}
    failurePolicy: Ignore
---
apiVersion: v1
kind: Service
metadata:
  name: draguard
spec:
  ports:
    - port: 443
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: draguard
webhooks:
- name: mutate.draguard.dev
  clientConfig:
    caBundle: Zm9v
    service:
      name: draguard
      namespace: draguard
      path: /mutate
"""


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_certs_arguments(parser)
    return parser.parse_args(argv)


def test_leaf_has_service_names_and_extra_sans() -> None:
    bundle = generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1", "webhook.example"])
    info = describe_certificate(bundle.cert)
    for name in service_dns_names("draguard", "draguard"):
        assert name in info["names"]
    assert "draguard.draguard.svc" in info["names"]
    assert "draguard.draguard.svc.cluster.local" in info["names"]
    assert "webhook.example" in info["names"]
    cert = x509.load_pem_x509_certificate(bundle.cert)
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("127.0.0.1") in san.get_values_for_type(x509.IPAddress)
    ca = x509.load_pem_x509_certificate(bundle.ca_cert)
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    assert ca.not_valid_after_utc > cert.not_valid_after_utc  # CA outlives the leaf
    cert.verify_directly_issued_by(ca)


def test_tls_handshake_verifies_against_the_ca(tmp_path: Path) -> None:
    """A real handshake on loopback: the client trusts only ca.crt and checks the svc name."""
    bundle = generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"])
    paths = write_bundle(bundle, tmp_path)
    server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server_ctx.load_cert_chain(paths["cert"], paths["key"])
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def serve() -> None:
        conn, _ = listener.accept()
        with server_ctx.wrap_socket(conn, server_side=True) as tls:
            tls.sendall(b"ok")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    client_ctx = ssl.create_default_context(cafile=str(paths["ca"]))
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, client_ctx.wrap_socket(
        raw, server_hostname="draguard.draguard.svc"
    ) as tls:
        assert tls.recv(2) == b"ok"
    t.join(5)
    listener.close()


def test_write_bundle_modes(tmp_path: Path) -> None:
    paths = write_bundle(generate_bundle("s", "n"), tmp_path / "out")
    assert stat.S_IMODE(paths["key"].stat().st_mode) == 0o600
    assert stat.S_IMODE(paths["ca_key"].stat().st_mode) == 0o600
    assert paths["cert"].read_bytes().startswith(b"-----BEGIN CERTIFICATE-----")


def test_patch_sets_every_webhook_and_keeps_comments() -> None:
    patched, count = patch_ca_bundle(MANIFEST, "Q0E=")
    assert count == 3
    assert "# Fail: claims must be checked" in patched
    assert "# webhook configurations" in patched
    docs = list(yaml.safe_load_all(patched))
    hooks = [h for d in docs if d["kind"].endswith("WebhookConfiguration") for h in d["webhooks"]]
    assert [h["clientConfig"]["caBundle"] for h in hooks] == ["Q0E=", "Q0E=", "Q0E="]
    assert docs[1]["kind"] == "Service"  # untouched
    # idempotent
    again, _ = patch_ca_bundle(patched, "Q0E=")
    assert again == patched


def test_patch_without_webhooks_is_a_no_op() -> None:
    text = "apiVersion: v1\nkind: Service\nmetadata: {name: x}\n"
    assert patch_ca_bundle(text, "Q0E=") == (text, 0)


def test_run_certs_writes_files_and_patches(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = tmp_path / "webhooks.yaml"
    manifest.write_text(MANIFEST)
    out = tmp_path / "certs"
    rc = run_certs(_parse(["--service", "draguard", "--namespace", "draguard", "--out", str(out),
                           "--san", "127.0.0.1", "--days", "30", "--patch", str(manifest)]))
    assert rc == 0, capsys.readouterr().err
    ca_pem = (out / "ca.crt").read_bytes()
    hooks = [h for d in yaml.safe_load_all(manifest.read_text()) if "webhooks" in d for h in d["webhooks"]]
    assert all(base64.b64decode(h["clientConfig"]["caBundle"]) == ca_pem for h in hooks)
    cert = x509.load_pem_x509_certificate((out / "tls.crt").read_bytes())
    lifetime = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert 29 < lifetime.days <= 30


def test_reuse_ca_keeps_the_ca_bundle(tmp_path: Path) -> None:
    out = tmp_path / "certs"
    assert run_certs(_parse(["--service", "s", "--namespace", "n", "--out", str(out)])) == 0
    ca_before = (out / "ca.crt").read_bytes()
    leaf_before = (out / "tls.crt").read_bytes()
    assert run_certs(_parse(["--service", "s", "--namespace", "n", "--out", str(out), "--reuse-ca"])) == 0
    assert (out / "ca.crt").read_bytes() == ca_before
    assert (out / "tls.crt").read_bytes() != leaf_before
    ca = x509.load_pem_x509_certificate(ca_before)
    x509.load_pem_x509_certificate((out / "tls.crt").read_bytes()).verify_directly_issued_by(ca)


def test_run_certs_reports_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_certs(_parse(["--service", "s", "--namespace", "n", "--out", str(tmp_path), "--days", "0"])) == 2
    no_hooks = tmp_path / "svc.yaml"
    no_hooks.write_text("apiVersion: v1\nkind: Service\nmetadata: {name: x}\n")
    rc = run_certs(_parse(["--service", "s", "--namespace", "n", "--out", str(tmp_path / "c"),
                           "--patch", str(no_hooks)]))
    assert rc == 2
    assert "no webhook configuration" in capsys.readouterr().err
    missing = run_certs(_parse(["--service", "s", "--namespace", "n", "--out", str(tmp_path / "d"),
                                "--patch", str(tmp_path / "missing.yaml")]))
    assert missing == 2
