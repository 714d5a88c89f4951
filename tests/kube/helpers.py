"""Test helpers: a background event loop, bounded waiting, kubeconfig files, sample objects."""

from __future__ import annotations

import asyncio
import base64
import threading
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import yaml


class LoopThread:
    """An asyncio loop in a daemon thread, so the test thread can poll the watcher's state."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self._futures: list[Future[Any]] = []

    def submit(self, coro: Coroutine[Any, Any, Any]) -> Future[Any]:
        fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        self._futures.append(fut)
        return fut

    def stop(self) -> None:
        """Cancel every task and let it unwind (closing its HTTP streams) before stopping."""

        async def shutdown() -> None:
            me = asyncio.current_task()
            tasks = [t for t in asyncio.all_tasks() if t is not me]
            for t in tasks:
                t.cancel()
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 5)

        asyncio.run_coroutine_threadsafe(shutdown(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()


def wait_for(predicate: Callable[[], Any], timeout: float = 10.0, what: str = "condition") -> Any:
    """Poll ``predicate`` every 10 ms until it is truthy; fail after ``timeout`` seconds (generous
    for a loaded CI machine; a passing wait returns as soon as the condition holds)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.01)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


def write_kubeconfig(path: Path, server: str, ca_pem: bytes, *, token: str | None = None,
                     client_cert: bytes | None = None, client_key: bytes | None = None) -> Path:
    user: dict[str, Any] = {}
    if token:
        user["token"] = token
    if client_cert and client_key:
        user["client-certificate-data"] = base64.b64encode(client_cert).decode()
        user["client-key-data"] = base64.b64encode(client_key).decode()
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {
            "server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "users": [{"name": "me", "user": user}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "me"}}],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def device_class(name: str, driver: str = "gpu.example.com") -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def resource_slice(name: str, node: str, devices: int = 1, driver: str = "gpu.example.com") -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
        "spec": {
            "driver": driver, "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": [{"name": f"gpu-{i}", "capacity": {"memory": {"value": "40Gi"}}} for i in range(devices)],
        },
    }


def node(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}}
