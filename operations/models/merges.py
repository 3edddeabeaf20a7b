"""Merge imports: the journal of one metastore merged into another (reserved id ranges, units copied, state)."""

from __future__ import annotations

from django.db import models

from operations.models.executions import Execution

__all__ = ("MergeImport",)


class MergeImport(models.Model):
    """One merge: the id ranges it reserved in the target (committed before any row is written), the offset of each
    source id, the units already copied (a resumed run skips them), the data copied for its location rules, and where
    it stands. Revert deletes exactly the
    recorded ranges."""

    class State(models.TextChoices):
        RESERVED = "reserved", "Ids reserved; nothing copied yet"
        COPYING = "copying", "Copying invisible rows"
        PUBLISHED = "published", "Published (databases and tables visible)"
        FAILED = "failed", "Failed before publishing (nothing visible; resume or revert)"
        REVERTED = "reverted", "Reverted (the imported rows deleted)"

    #: States of an import that stopped before publishing: its invisible rows wait for a resume or a revert.
    UNFINISHED = (State.RESERVED, State.COPYING, State.FAILED)

    source = models.CharField(max_length=64)
    target = models.CharField(max_length=64)
    request = models.JSONField(help_text="The MergeRequest as approved (MergeRequest.as_dict).")
    fingerprint = models.CharField(max_length=64, help_text="The approved MergePreview's fingerprint.")
    state = models.CharField(max_length=16, choices=State.choices, default=State.RESERVED)
    id_ranges = models.JSONField(default=dict, help_text="{HIVE_TABLE: [first, last]} reserved in the target.")
    offsets = models.JSONField(default=dict, help_text="{HIVE_TABLE: offset}: target id = source id + offset.")
    database_ids = models.JSONField(default=list, help_text="The source's DB_IDs being merged.")
    completed = models.JSONField(default=list, help_text="Units copied and committed in the target.")
    data_copy = models.JSONField(
        default=dict,
        help_text="The data the location rules move (operations.merge.data_copy): units, the files planned per unit, "
        "the units copied and verified, and what a revert kept.",
    )
    execution = models.ForeignKey(Execution, null=True, blank=True, on_delete=models.PROTECT, related_name="merges")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["target", "state"], name="merge_target_state_idx")]

    def __str__(self) -> str:
        return f"Merge #{self.pk} {self.source} → {self.target} ({self.state})"
