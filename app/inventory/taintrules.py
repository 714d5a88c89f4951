"""DeviceTaintRules applied to the inventory's devices, as the scheduler's ResourceSlice tracker does.

Why: a DeviceTaintRule adds its taint to every device it selects "as if the taint was specified
directly in the ResourceSlice by the DRA driver" (``resource/v1`` types.go); the scheduler sees
slices patched with those taints (``k8s.io/dynamic-resource-allocation/resourceslice/tracker``,
``applyPatches``) when ``DRADeviceTaintRules`` is on — so a ``NoSchedule``/``NoExecute`` rule makes
its devices unusable for a claim that does not tolerate it, exactly like a slice's own taint.

Selection: every criterion that is set must equal the device's driver, pool and name; an empty
selector (``deviceSelector: {}``) selects every device.  A rule *without* a selector selects no
device in 1.37.1+ and 1.38 (kubernetes#141998 / #141648: "a bug ... incorrectly matched every
device") and every device in 1.35/1.36 (the tracker of 1.36.3 reads a missing selector as the
empty one).  1.37.0 still matched every device; the target names a minor, not a patch, and the
more permissive answer (fewer taints, never a false denial) wins.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..k8s import DeviceTaint, DeviceTaintRule, Target, minor_key

__all__ = ["RULES_GATE", "rule_taints", "rules_apply", "selects"]

RULES_GATE = "DRADeviceTaintRules"


def rules_apply(target: Target) -> bool:
    """Whether the scheduler of ``target`` applies DeviceTaintRules at all."""
    return target.enabled(RULES_GATE)


def _missing_selector_selects_all(target: Target) -> bool:
    return minor_key(target.version) <= (1, 36)


def selects(rule: DeviceTaintRule, driver: str, pool: str, device: str, target: Target) -> bool:
    """Whether ``rule`` taints the device ``driver``/``pool``/``device`` at ``target``."""
    selector = rule.spec.device_selector
    if selector is None:
        return _missing_selector_selects_all(target)
    return ((selector.driver is None or selector.driver == driver)
            and (selector.pool is None or selector.pool == pool)
            and (selector.device is None or selector.device == device))


def rule_taints(rules: Sequence[DeviceTaintRule], driver: str, pool: str, device: str,
                target: Target) -> tuple[DeviceTaint, ...]:
    """The taints ``rules`` add to one device, in the rules' order (empty when none applies)."""
    return tuple(rule.spec.taint for rule in rules if selects(rule, driver, pool, device, target))
