"""The hostile probes of issue #12 against a real ``draguard serve``: answer, time, memory, neighbours.

Each probe is sent to a fresh ``draguard serve`` process (static demo inventory) while another
client keeps calling ``/healthz``; the table says what the probe got (a 4xx or a decision is
expected, never a 5xx), how long it took, the server's RSS afterwards, and the slowest
``/healthz`` answer meanwhile (the server must keep answering other clients).

    python benchmarks/probes.py [--no-write]
"""

from __future__ import annotations

import argparse
import json
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from draguard.certs import generate_bundle, write_bundle  # noqa: E402
from results import write_section  # noqa: E402

START, END = "<!-- probes:start -->", "<!-- probes:end -->"
JSON = {"Content-Type": "application/json"}


def claim(memory: str, parameters: Any = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"devices": {"requests": [{"name": "gpu", "exactly": {
        "deviceClassName": "gpu.example.com", "capacity": {"requests": {"memory": memory}}}}]}}
    if parameters is not None:
        spec["devices"]["config"] = [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com",
                                                                      "parameters": parameters}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": "probe", "namespace": "default"}, "spec": spec}


def review_bytes(obj: dict[str, Any], uid: str | None = None) -> bytes:
    gvk = {"group": "resource.k8s.io", "version": "v1", "kind": "ResourceClaim"}
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": uid or str(uuid.uuid4()), "kind": gvk, "operation": "CREATE", "namespace": "default",
        "name": "probe", "object": obj}}).encode()


def nested_parameters(levels: int) -> str:
    """``{"p": [[[…]]]}`` as JSON text (built as text: json.dumps would recurse)."""
    return '{"p": ' + "[" * levels + "]" * levels + "}"


def deep_claim_review(levels: int, memory: str) -> bytes:
    text = review_bytes(claim(memory, {"p": "PLACEHOLDER"})).decode()
    return text.replace('{"p": "PLACEHOLDER"}', nested_parameters(levels)).encode()


def deep_claim(levels: int, memory: str) -> bytes:
    text = json.dumps(claim(memory, {"p": "PLACEHOLDER"}))
    return text.replace('{"p": "PLACEHOLDER"}', nested_parameters(levels)).encode()


ALIAS_BOMB = b"""a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""


def kind_list(items: int) -> bytes:
    one = claim("8Gi")
    return json.dumps({"apiVersion": "v1", "kind": "List",
                       "items": [{**one, "metadata": {"name": f"c{i}", "namespace": "default"}}
                                 for i in range(items)]}).encode()


def raw_exchange(port: int, ca: str, payload: list[bytes], pause: float = 0.0, read: bool = True) -> str:
    raw = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock = ssl.create_default_context(cafile=ca).wrap_socket(raw, server_hostname="127.0.0.1")
    try:
        for chunk in payload:
            try:
                sock.sendall(chunk)
            except OSError:
                break
            if pause:
                time.sleep(pause)
        if not read:
            return "closed by the client"
        data = b""
        while True:
            try:
                chunk = sock.recv(65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
        return data.split(b"\r\n", 1)[0].decode(errors="replace")
    finally:
        sock.close()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def probes(port: int, ca: str) -> list[tuple[str, Callable[[httpx.Client], str]]]:
    def post(route: str, body: bytes, headers: dict[str, str] | None = None) -> Callable[[httpx.Client], str]:
        def send(client: httpx.Client) -> str:
            r = client.post(route, content=body, headers=headers or JSON)
            if r.status_code == 200 and route != "/lint":
                resp = r.json()["response"]
                causes = [c["reason"] for c in resp.get("status", {}).get("details", {}).get("causes", [])]
                return f"200 allowed={resp['allowed']} {','.join(causes) or ''}".strip()
            if r.status_code == 200:
                s = r.json()["summary"]
                return f"200 objects={s['objects']} errors={s['errors']}"
            return f"{r.status_code} {r.json().get('reason', '')}"
        return send

    header = b"GET /healthz HTTP/1.1\r\nHost: x\r\n"
    return [
        ("JSON body nested 1,000 deep to /validate", post("/validate", b"[" * 1000 + b"]" * 1000)),
        ("JSON body nested 1,000 deep to /lint", post("/lint", b"[" * 1000 + b"]" * 1000)),
        ("lone surrogate in the uid", post("/validate", review_bytes(claim("8Gi"), "\ud800"))),
        ("lone surrogate in the name (/lint)", post("/lint", json.dumps(
            {**claim("8Gi"), "metadata": {"name": "a\ud800"}}).encode())),
        ("opaque.parameters 600 deep, claim unsatisfiable (/validate)", post("/validate", deep_claim_review(600, "500Gi"))),
        ("opaque.parameters 5,000 deep, claim unsatisfiable (/validate)",
         post("/validate", deep_claim_review(5000, "500Gi"))),
        ("opaque.parameters 5,000 deep (/lint)", post("/lint", deep_claim(5000, "500Gi"))),
        ("YAML alias bomb (641 bytes) to /lint", post("/lint", ALIAS_BOMB, {"Content-Type": "application/yaml"})),
        ("kind: List with 4,000 items to /lint", post("/lint", kind_list(4000))),
        ("body of 4 MiB", post("/validate", b" " * (4 << 20))),
        ("8 MiB header", lambda c: raw_exchange(port, ca, [header] + [b"X-A: " + b"a" * (1 << 20) + b"\r\n"] * 8)),
        ("slowloris: headers never finished", lambda c: raw_exchange(port, ca, [header])),
        ("client gone mid-body", lambda c: raw_exchange(port, ca, [
            b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"], read=False)),
        ("700 KB uid", post("/validate", review_bytes(claim("8Gi"), "u" * 700_000))),
    ]


def run() -> list[dict[str, Any]]:
    work = Path(tempfile.mkdtemp(prefix="draguard-probes-"))
    tls = write_bundle(generate_bundle("draguard", "draguard", extra_sans=["127.0.0.1"]), work / "tls")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    log_path = work / "serve.log"
    log = log_path.open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "draguard", "serve", "--host", "127.0.0.1", "--port", str(port),
         "--tls-cert", str(tls["cert"]), "--tls-key", str(tls["key"]),
         "--inventory", str(ROOT / "examples" / "inventory"), "--shutdown-drain-seconds", "0"],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log)
    ca = str(tls["ca"])
    rows: list[dict[str, Any]] = []
    try:
        client = httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=ca, timeout=60)
        deadline = time.monotonic() + 60
        while True:
            try:
                if client.get("/readyz").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit("draguard did not start")
            time.sleep(0.2)
        for name, probe in probes(port, ca):
            worst = [0.0]
            stop = threading.Event()

            def neighbour(worst: list[float] = worst, stop: threading.Event = stop) -> None:
                with httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=ca, timeout=30) as other:
                    while not stop.is_set():
                        t0 = time.perf_counter()
                        try:
                            other.get("/healthz")
                        except httpx.HTTPError:
                            worst[0] = float("inf")
                        worst[0] = max(worst[0], time.perf_counter() - t0)
                        time.sleep(0.05)

            watcher = threading.Thread(target=neighbour, daemon=True)
            watcher.start()
            t0 = time.perf_counter()
            try:
                answer = probe(client)
            except Exception as exc:  # a probe must never break the client either: report it
                answer = f"client error: {type(exc).__name__}"
            elapsed = time.perf_counter() - t0
            time.sleep(0.3)
            stop.set()
            watcher.join(5)
            rows.append({"probe": name, "answer": answer, "seconds": round(elapsed, 2),
                         "rss_mb": round(rss_mb(server.pid), 1), "healthz_worst_ms": round(worst[0] * 1000, 1)})
            print(json.dumps(rows[-1]))
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    text = log_path.read_text(errors="replace")
    rows.append({"probe": "server log", "answer": f"{len(text.splitlines())} lines, longest "
                 f"{max((len(line) for line in text.splitlines()), default=0)} chars, "
                 f"{text.count('Traceback')} tracebacks", "seconds": 0, "rss_mb": 0, "healthz_worst_ms": 0})
    return rows


def write_results(rows: list[dict[str, Any]]) -> None:
    lines = [START, "## Hostile probes of issue #12 (benchmarks/probes.py)", "",
             "Each probe against a real `draguard serve` (demo inventory) while another client polls "
             "`/healthz`; the machine is a shared 2-CPU VM.", "",
             "| probe | answer | seconds | server RSS MB | worst /healthz meanwhile ms |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['probe']} | {r['answer']} | {r['seconds']} | {r['rss_mb']} | {r['healthz_worst_ms']} |")
    lines.append(END)
    section = "\n".join(lines)
    write_section(START, END, section)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    rows = run()
    if not args.no_write:
        write_results(rows)


if __name__ == "__main__":
    main()
