"""
The change-kind seam: what every kind of change (an ALTER, a data job, a merge, a revert) provides, and the registry
the services and pages ask. They never name a kind.

A kind rebuilds a request's frozen plan now (fingerprint, the ``as_dict()`` summary a request stores, blockers, risk
criteria, estimate), compares it with the approved one, gives the plan undoing an execution, and names the job kind
that runs it. Kinds register themselves from ``OperationsConfig.ready`` (``operations/apps.py``); this package imports
no service and no kind.
"""

from operations.changes.kind import ChangeKind, Plan, Subject
from operations.changes.registry import change_kind, register_change_kind, registered_kinds

__all__ = ("ChangeKind", "Plan", "Subject", "change_kind", "register_change_kind", "registered_kinds")
