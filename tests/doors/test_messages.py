"""Messages as a user reads them (issue #35, item 7): amounts in the form people write, and a
capacity request on a device that cannot be shared said (info, never a denial)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from draguard.k8s import Quantity, Reason, Severity
from draguard.k8s.quantity import Format

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "satisfy"))

from dra_builders import cap, check, claim, device, inventory, req, rslice


@pytest.mark.parametrize(("nanos", "fmt", "want"), [
    (10 * 10**18, Format.BINARY_SI, "10G"),  # NewQuantity(10G, BinarySI) prints 9765625Ki
    (15 * 10**17, Format.BINARY_SI, "1500M"),  # ... and 1500000000
    (10 * 2**30 * 10**9, Format.BINARY_SI, "10Gi"),
    (10 * 2**30 * 10**9, Format.DECIMAL_SI, "10Gi"),  # 10737418240: the binary form is shorter
    (15 * 10**17, Format.DECIMAL_EXPONENT, "1500M"),
    (1500 * 10**6, Format.DECIMAL_SI, "1500m"),
    (0, Format.BINARY_SI, "0"),
])
def test_short_is_the_shortest_exact_suffix_form(nanos: int, fmt: Format, want: str) -> None:
    q = Quantity(nanos, fmt)
    assert q.short() == want
    assert Quantity.parse(q.short()) == q  # exact: the same value


def test_short_keeps_the_users_suffix() -> None:
    assert [Quantity.parse(t).short() for t in ("40Gi", "1500M", "10G", "512Mi", "100m")] == [
        "40Gi", "1500M", "10G", "512Mi", "100m"]


def test_a_rounded_consumption_prints_short() -> None:
    """1500M on a 10G NIC whose policy steps by 500M from 1G: it consumes 1500M, printed so."""
    nic = device("nic-0", multi=True, capacity={"bandwidth": cap("10G", "1G", min="1G", step="500M")})
    inv = inventory(rslice("n", [nic]))
    notes = check(claim(req("nic", capacity={"bandwidth": "1200M"})), inv)
    [rounded] = [n for n in notes if n.reason == Reason.CAPACITY_ROUNDED]
    assert "1200M of bandwidth will consume 1500M" in rounded.message, rounded.message
    assert "1500000000" not in rounded.message and "1500M" in rounded.brief


def test_capacity_on_a_device_that_cannot_be_shared_is_said_never_denied() -> None:
    big = device("gpu-0", capacity={"memory": cap("1920G")})
    notes = check(claim(req("gpu", capacity={"memory": "100Gi"})), inventory(rslice("n", [big])))
    whole = [n for n in notes if n.reason == Reason.CAPACITY_ON_EXCLUSIVE_DEVICE]
    assert len(whole) == 1 and whole[0].severity is Severity.INFO
    assert "takes a whole device" in whole[0].message and "1920G" in whole[0].message
    assert str(whole[0].path).endswith("capacity.requests[memory]") or "capacity" in str(whole[0].path)
    assert not any(n.severity is Severity.ERROR for n in notes)


def test_capacity_on_a_shareable_device_or_no_capacity_asked_says_nothing() -> None:
    shared = device("gpu-0", multi=True, capacity={"memory": cap("40Gi")})
    notes = check(claim(req("gpu", capacity={"memory": "10Gi"})), inventory(rslice("n", [shared])))
    assert not any(n.reason == Reason.CAPACITY_ON_EXCLUSIVE_DEVICE for n in notes)
    plain = device("gpu-0", capacity={"memory": cap("40Gi")})
    notes = check(claim(req("gpu")), inventory(rslice("n", [plain])))
    assert not any(n.reason == Reason.CAPACITY_ON_EXCLUSIVE_DEVICE for n in notes)
    # a mix: one device it may land on is shareable, so the claim need not take a whole one
    notes = check(claim(req("gpu", capacity={"memory": "10Gi"})), inventory(rslice("n", [plain, shared])))
    assert not any(n.reason == Reason.CAPACITY_ON_EXCLUSIVE_DEVICE for n in notes)


def test_a_cel_domain_or_name_typo_names_the_nearest_published_one() -> None:
    gpu = device("gpu-0", attrs={"model": "a100"})
    inv = inventory(rslice("n", [gpu]))
    for expr, said in [
        ('device.attributes["gpu.exmaple.com"].model == "a100"',
         "publishes no attribute domain gpu.exmaple.com; did you mean gpu.example.com?"),
        ('device.attributes["gpu.example.com"].modle == "a100"',
         "publishes no attribute modle in gpu.example.com; did you mean model?"),
    ]:
        notes = check(claim(req("gpu", selectors=(expr,))), inv)
        [err] = [n for n in notes if n.reason == Reason.SELECTOR_RUNTIME_ERROR]
        assert said in err.message and "guard with" not in err.message, err.message


def test_a_truly_optional_name_keeps_the_guard_hint() -> None:
    gpu = device("gpu-0", attrs={"model": "a100"})
    notes = check(claim(req("gpu", selectors=('device.attributes["gpu.example.com"].vram > 0',))),
                  inventory(rslice("n", [gpu])))
    [err] = [n for n in notes if n.reason == Reason.SELECTOR_RUNTIME_ERROR]
    assert 'guard with "vram" in device.attributes["gpu.example.com"]' in err.message
