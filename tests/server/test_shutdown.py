"""SIGTERM under load, on the real command: readiness goes 503 first, reviews keep being answered
through the drain period, then the process exits 0 — no review fails along the way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
from draguard.certs import generate_bundle, write_bundle
from draguard.server.runner import BackgroundServer
from kube.helpers import wait_for

from server.conftest import DATA, client_context
from server.reviews import admission_review, claim

ROOT = Path(__file__).resolve().parents[2]
DRAIN = 3.0


def _free_port() -> int:
    probe = BackgroundServer(lambda *a: None)
    port = probe.port
    probe.sock.close()
    return port


def test_sigterm_under_load_drains_before_stopping(tmp_path: Path) -> None:
    paths = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), tmp_path / "tls")
    port = _free_port()
    log_file = (tmp_path / "serve.log").open("wb")  # a file, not a pipe: one line per review fills a pipe
    proc = subprocess.Popen(
        [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--tls-cert", str(paths["cert"]), "--tls-key", str(paths["key"]),
         "--inventory", str(DATA / "inventory.yaml"), "--shutdown-drain-seconds", str(DRAIN)],
        cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.DEVNULL, stderr=log_file,
    )
    url = f"https://127.0.0.1:{port}"
    verify = client_context(paths["ca"])
    outcomes: Counter[str] = Counter()
    stop = threading.Event()
    review = admission_review(claim("load", memory="8Gi"))

    def load() -> None:
        with httpx.Client(base_url=url, verify=verify, timeout=10) as client:
            while not stop.is_set():
                try:
                    status = client.post("/validate", json=review).status_code
                    outcomes[str(status)] += 1
                except httpx.HTTPError as exc:
                    outcomes[type(exc).__name__] += 1

    try:
        probe = httpx.Client(base_url=url, verify=verify, timeout=5)

        def ready() -> bool:
            try:
                return probe.get("/readyz").status_code == 200
            except httpx.TransportError:
                return proc.poll() is not None

        wait_for(ready, timeout=30, what="draguard serve to be ready")
        workers = [threading.Thread(target=load) for _ in range(3)]
        for w in workers:
            w.start()
        wait_for(lambda: sum(outcomes.values()) >= 30, timeout=30, what="load to flow")
        proc.send_signal(signal.SIGTERM)
        wait_for(lambda: probe.get("/readyz").status_code == 503, timeout=DRAIN, what="readiness to fail")
        body = probe.get("/readyz").json()
        assert body["shuttingDown"] is True and body["ready"] is False
        time.sleep(DRAIN / 3)  # well inside the drain period: still serving, new connections too
        assert proc.poll() is None
        with httpx.Client(base_url=url, verify=verify, timeout=5) as fresh:
            assert fresh.post("/validate", json=review).status_code == 200
        before = sum(outcomes.values())
        wait_for(lambda: sum(outcomes.values()) > before + 10, timeout=DRAIN, what="reviews during the drain")
        # the endpoints controller has removed the pod by now: clients stop calling it
        stop.set()
        for w in workers:
            w.join(15)
        probe.close()
        assert proc.wait(timeout=DRAIN + 15) == 0
    finally:
        stop.set()
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        log_file.close()
    log = (tmp_path / "serve.log").read_text()
    assert set(outcomes) == {"200"}, (outcomes, log[-2000:])
    assert "readiness fails while connections drain" in log and "drain period over" in log
    assert "Traceback" not in log
