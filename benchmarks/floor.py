"""The floor of the server benchmarks: a no-op AdmissionReview webhook on draguard's own stack.

Why a floor: an absolute reviews-per-second figure on a shared 2-core VM says more about the
other jobs on the machine than about draguard.  This server runs the same libraries the same
way ``draguard serve`` does — FastAPI on uvicorn with the httptools protocol and the event loop
uvicorn picks (uvloop), TLS from the same kind of certificate, TCP_NODELAY on the listening
socket, orjson in and out, no access log — and answers every ``POST /validate`` with
``allowed: true`` after decoding the body and reading the request's ``uid``, without any review.
The benchmarks drive it with the same clients and the same bodies in the same run as draguard,
and report draguard as a ratio of it: what draguard costs on top of what the stack costs.

    python benchmarks/floor.py --port 8443 --tls-cert cert.pem --tls-key key.pem
"""

from __future__ import annotations

import argparse
import socket
import ssl
from typing import Any

import orjson
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import Response


def create_floor_app() -> FastAPI:
    """The no-op webhook: decode, echo the uid, allow."""
    app = FastAPI(title="floor", docs_url=None, redoc_url=None, openapi_url=None)

    @app.post("/validate")
    async def validate(request: Request) -> Response:
        doc: Any = orjson.loads(await request.body())
        request_part = doc.get("request") if isinstance(doc, dict) else None
        uid = request_part.get("uid", "") if isinstance(request_part, dict) else ""
        answer = {"apiVersion": doc.get("apiVersion", "admission.k8s.io/v1"), "kind": "AdmissionReview",
                  "response": {"uid": uid, "allowed": True}}
        return Response(orjson.dumps(answer), media_type="application/json")

    @app.get("/readyz")
    async def readyz() -> Response:
        return Response(b'{"ready":true}', media_type="application/json")

    return app


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tls-cert", required=True)
    parser.add_argument("--tls-key", required=True)
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind((args.host, args.port))
    sock.listen(1024)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)  # the context draguard's tls.py makes
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_alpn_protocols(["http/1.1"])
    ctx.load_cert_chain(args.tls_cert, args.tls_key)
    cfg = uvicorn.Config(create_floor_app(), http="httptools", ws="none", log_level="error", access_log=False,
                         timeout_keep_alive=30, server_header=False, log_config=None)
    cfg.load()
    cfg.ssl = ctx  # as draguard's runner does: a ready-made context
    uvicorn.Server(cfg).run(sockets=[sock])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
