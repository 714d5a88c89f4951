"""Static satisfiability: could Kubernetes 1.36's allocator ever allocate this claim?

Entry point: :func:`check_claim_spec`.  The inventory (:mod:`app.inventory`) supplies classes,
devices and node groups; :mod:`app.capacity` the per-device capacity arithmetic; CEL selectors
come from :mod:`app.cel`.
"""

from app.satisfy.check import SEARCH_UNDECIDED, check_claim_spec

__all__ = ["SEARCH_UNDECIDED", "check_claim_spec"]
