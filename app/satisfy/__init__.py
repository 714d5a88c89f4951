"""Static satisfiability: could Kubernetes 1.36's allocator ever allocate this claim?

Entry points: :func:`check_claim_spec`, and :func:`policy_defaults` (which omitted capacity
requests the mutating webhook may fill with the policy default).  The inventory (:mod:`app.inventory`) supplies classes,
devices and node groups; :mod:`app.capacity` the per-device capacity arithmetic; CEL selectors
come from :mod:`app.cel`.
"""

from .check import SEARCH_DEADLINE, check_claim_spec
from .defaults import DefaultFill, policy_defaults

__all__ = ["SEARCH_DEADLINE", "DefaultFill", "check_claim_spec", "policy_defaults"]
