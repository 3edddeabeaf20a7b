"""
``manage.py export_audit`` and ``manage.py verify_audit``: exports that a spreadsheet cannot run, and an anchor that
detects a cut tail.

Every export carries the chain's anchor (its head hash and record count); ``verify_audit --expect-head HASH:COUNT``
fails when that record is no longer in the chain at its position, which the hash chain alone cannot see: the
records left after deleting the last ones still chain correctly.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from operations.models import AuditRecord
from operations.services.audit import record_audit

pytestmark = pytest.mark.django_db

FORMULAS = ('=HYPERLINK("http://evil")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx")


def command(name: str, *args: str) -> str:
    out = io.StringIO()
    call_command(name, *args, stdout=out)
    return out.getvalue()


def append(count: int, prefix: str = "action") -> None:
    for number in range(count):
        record_audit(actor="steward", action=f"{prefix}-{number}", outcome="done", details={"n": number})


def test_csv_cells_starting_like_a_formula_are_neutralised() -> None:
    """A cell a spreadsheet would evaluate (=, +, -, @, tab, CR first) is exported as text: prefixed with '."""
    # given
    for text in FORMULAS:
        record_audit(actor=text, action="comment", outcome=text, statement="SELECT 1")

    # when
    *rows, _anchor = csv.DictReader(io.StringIO(command("export_audit", "--format", "csv")))

    # then
    assert [(row["actor"], row["outcome"]) for row in rows] == [(f"'{text}", f"'{text}") for text in FORMULAS]
    assert {row["statement"] for row in rows} == {"SELECT 1"}


def test_the_json_export_keeps_values_exact_and_carries_the_anchor() -> None:
    """JSON is not a spreadsheet: values stay as recorded; the top level names the chain's head hash and count."""
    # given
    record_audit(actor="=1+1", action="comment", outcome="done")
    append(2)

    # when
    exported = json.loads(command("export_audit", "--format", "json"))

    # then
    head = AuditRecord.objects.order_by("id").last()
    assert (exported["chain_head"], exported["chain_count"]) == (head.hash, 3)
    assert [r["actor"] for r in exported["records"]] == ["=1+1", "steward", "steward"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_a_cut_tail_is_detected_with_an_exports_anchor(fmt: str) -> None:
    """Deleting the chain's last records leaves a chain that verifies; the anchor of an earlier export catches it."""
    # given
    append(5)
    anchor = export_anchor(fmt)
    last_two = list(AuditRecord.objects.order_by("-id").values_list("id", flat=True)[:2])
    with connection.cursor() as cursor:  # the model refuses deletes: only a raw statement can cut the log
        cursor.execute(f"DELETE FROM {AuditRecord._meta.db_table} WHERE id IN (%s, %s)", last_two)

    # when
    plain = command("verify_audit")
    with pytest.raises(CommandError) as refused:
        command("verify_audit", "--expect-head", anchor)

    # then
    assert "3 records is intact" in plain
    assert "no record has the anchored head hash" in str(refused.value)
    assert "the chain's tail was removed" in str(refused.value)


def test_the_anchor_holds_while_the_chain_grows() -> None:
    """Records appended after an export are not a problem: the anchored record is still there, at its position."""
    # given
    append(3)
    anchor = export_anchor("csv")
    append(2, prefix="later")

    # when
    output = command("verify_audit", "--expect-head", anchor)

    # then
    assert f"The audit chain of 5 records is intact, and holds the expected head {anchor}." in output


def test_an_anchor_at_another_position_is_detected() -> None:
    """The right head hash with a wrong count (records removed before it and the chain rebuilt) fails too."""
    # given
    append(3)
    head_hash = export_anchor("json").partition(":")[0]

    # when
    with pytest.raises(CommandError) as refused:
        command("verify_audit", "--expect-head", f"{head_hash}:4")
    with pytest.raises(CommandError) as malformed:
        command("verify_audit", "--expect-head", "not-a-hash")

    # then
    assert "record 3 of the chain, not record 4" in str(refused.value)
    assert "is not a SHA-256 hash" in str(malformed.value)


def export_anchor(fmt: str) -> str:
    """The ``HASH:COUNT`` anchor of an export, read from the export itself."""
    text = command("export_audit", "--format", fmt)
    if fmt == "json":
        document = json.loads(text)
        return f"{document['chain_head']}:{document['chain_count']}"
    trailer = text.strip().splitlines()[-1]
    assert trailer.startswith("# chain head ")
    return trailer.removeprefix("# chain head ").split(" ")[0]
