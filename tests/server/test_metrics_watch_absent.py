"""An optional resource the cluster does not serve (DeviceTaintRules on a 1.35 cluster, or a 403)
is exported as absent, never as a disconnected watch an alert would fire on."""

from __future__ import annotations

from draguard.server.metrics import Metrics


def _render(watches: dict[str, dict[str, object]]) -> str:
    return Metrics(lambda: {"synced": True, "watches": watches, "stale": False}).render().decode()


def test_an_absent_optional_resource_is_not_a_disconnected_watch() -> None:
    text = _render({
        "resourceslices": {"connected": True, "lastContactAgeSeconds": 3.0},
        "devicetaintrules": {"connected": False, "lastContactAgeSeconds": None, "absent": "404: not served"},
    })
    assert 'draguard_watch_connected{resource="resourceslices"} 1.0' in text
    assert 'draguard_watch_connected{resource="devicetaintrules"}' not in text
    assert 'draguard_watch_absent{resource="devicetaintrules"} 1.0' in text


def test_a_served_resource_whose_watch_broke_is_disconnected() -> None:
    text = _render({"devicetaintrules": {"connected": False, "lastContactAgeSeconds": 90.0}})
    assert 'draguard_watch_connected{resource="devicetaintrules"} 0.0' in text
    assert 'draguard_watch_absent{resource="devicetaintrules"}' not in text
