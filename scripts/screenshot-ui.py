#!/usr/bin/env python3
"""Regenerate docs/img/ui.png: ``draguard ui`` on the demo inventory, photographed by headless chromium.

The demo inventory (examples/inventory: four nodes, shareable A100s, an H100, NICs) is shown with
a few claims allocated on top of it and a pod that waits, written to a temporary folder beside it
— so the bars have something to show and the pending panel an answer.  Uses Debian's chromium
(scripts/setup-chromium.sh) through the ``playwright`` package; never downloads a browser.

    .venv/bin/python scripts/screenshot-ui.py [--out docs/img/ui.png]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
GPU, NIC = "gpu.example.com", "nic.example.com"


def claim(ns: str, name: str, cls: str, results: list[dict[str, Any]] | None, **exactly: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                           "metadata": {"name": name, "namespace": ns},
                           "spec": {"devices": {"requests": [{"name": "dev", "exactly": {"deviceClassName": cls, **exactly}}]}}}
    if results is not None:
        obj["status"] = {"allocation": {"devices": {"results": [{"request": "dev", **r} for r in results]}}}
    return obj


def demo_state() -> list[dict[str, Any]]:
    """Claims on the demo devices: the H100 held whole, shares of two A100s, a NIC share; one
    claim waiting for the H100 and a pod waiting on a template that asks for it."""
    h100 = [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "H100"'}}]
    return [
        claim("team-a", "train-1", GPU, [{"driver": GPU, "pool": "worker-b2", "device": "gpu-0"}], selectors=h100),
        claim("team-a", "infer-1", GPU, [{"driver": GPU, "pool": "worker-a1", "device": "gpu-0", "shareID": "3f1c0a2e-0001-4e5b-9a7c-1d2e3f4a5b01",
                                          "consumedCapacity": {"memory": "10Gi"}}], capacity={"requests": {"memory": "10Gi"}}),
        claim("team-b", "infer-2", GPU, [{"driver": GPU, "pool": "worker-a1", "device": "gpu-0", "shareID": "3f1c0a2e-0002-4e5b-9a7c-1d2e3f4a5b02",
                                          "consumedCapacity": {"memory": "20Gi"}}], capacity={"requests": {"memory": "20Gi"}}),
        claim("team-b", "infer-3", GPU, [{"driver": GPU, "pool": "worker-b1", "device": "gpu-1", "shareID": "3f1c0a2e-0003-4e5b-9a7c-1d2e3f4a5b03",
                                          "consumedCapacity": {"memory": "35Gi"}}], capacity={"requests": {"memory": "35Gi"}}),
        claim("team-a", "train-2", GPU, None, selectors=h100),
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "h100", "namespace": "team-a"},
         "spec": {"spec": {"devices": {"requests": [{"name": "dev", "exactly": {"deviceClassName": GPU, "selectors": h100}}]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "finetune-0", "namespace": "team-a"},
         "spec": {"containers": [{"name": "main", "image": "registry.example.com/finetune:1", "resources": {"claims": [{"name": "gpu"}]}}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimName": "train-2"}]},
         "status": {"phase": "Pending"}},
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "img" / "ui.png"))
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--clips", default="", metavar="PREFIX",
                        help="also write the page in 800-pixel slices, PREFIX-0.png … (to check it at full size)")
    args = parser.parse_args()
    chromium = shutil.which("chromium")
    if chromium is None:
        print("screenshot-ui: no chromium on PATH (scripts/setup-chromium.sh installs Debian's)", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="draguard-ui-demo-") as tmp:
        # run where the paths read as in the repository: examples/inventory plus the demo claims
        (Path(tmp) / "examples").mkdir()
        (Path(tmp) / "examples" / "inventory").symlink_to(ROOT / "examples" / "inventory")
        (Path(tmp) / "demo-claims.yaml").write_text(yaml.safe_dump_all(demo_state(), sort_keys=False))
        proc = subprocess.Popen([sys.executable, "-m", "draguard", "ui", "--inventory", "examples/inventory",
                                 "--inventory", "demo-claims.yaml", "-n", "team-a", "--port", "0"],
                                cwd=tmp, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            url = line.split()[2] if line.startswith("draguard ui: http") else ""
            if not url:
                print(f"screenshot-ui: draguard ui did not start: {line!r}", file=sys.stderr)
                return 1
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=chromium, headless=True)
                page = browser.new_page(viewport={"width": args.width, "height": 900}, device_scale_factor=1)
                page.goto(url)
                page.wait_for_selector("[data-testid=class]")
                page.fill("[data-testid=paste]", yaml.safe_dump(claim("team-a", "one-more", GPU, None,
                                                                      capacity={"requests": {"memory": "15Gi"}}),
                                                                sort_keys=False))
                page.click("[data-testid=check-button]")
                page.wait_for_selector("[data-testid=check-fit]")
                time.sleep(0.3)
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=args.out, full_page=True)
                if args.clips:
                    for n, y in enumerate(range(0, int(page.evaluate("document.body.scrollHeight")), 800)):
                        page.screenshot(path=f"{args.clips}-{n}.png", full_page=True,
                                        clip={"x": 0, "y": y, "width": args.width, "height": 800})
                browser.close()
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
