"""
The steward's workflow on the pages (issue 14): readable diffs in the live preview, risk criteria and the rule they
matched, what a viewer is offered, refused actions in the audit log, revising a rejected request, the guided request,
a late scheduled request, and the API schema in a browser.
"""

from __future__ import annotations

import re
from datetime import timedelta
from html import escape, unescape

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from catalog_admin.errors import ApplicationError
from operations.ddl.parser import parse_alter
from operations.models import AuditRecord, ChangeRequest
from operations.services.audit import verify_audit_chain
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_reject,
    change_request_submit,
)
from tests.fixtures.factories import html

pytestmark = pytest.mark.django_db(databases="__all__")

ADD_COLUMN = "ALTER TABLE sales.customers ADD COLUMNS (tier string COMMENT 'loyalty tier')"
SET_PROPERTY = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='growth')"
BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"  # what Chromium sends


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def live_preview(client: Client, metastore, statement: str) -> str:
    response = client.post(
        reverse("operations:preview"), {"metastore": metastore.name, "statement": statement}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    return html(response)


def submitted(people, metastore, statement: str = SET_PROPERTY) -> ChangeRequest:
    draft = change_request_create(user=people["steward"], metastore=metastore.name, spec=parse_alter(statement))
    return change_request_submit(request=draft, user=people["steward"])


def test_the_live_preview_shows_column_changes_as_the_saved_request_does(metastore, people) -> None:
    """Columns and parameters are a per-entry diff in the live preview too, never Python tuples."""
    # given
    client = signed_in(people["steward"])
    draft = change_request_create(user=people["steward"], metastore=metastore.name, spec=parse_alter(ADD_COLUMN))

    # when
    live = live_preview(client, metastore, ADD_COLUMN)
    saved = html(client.get(reverse("operations:detail", args=[draft.pk])))

    # then
    def diff_of(page: str) -> str:
        return re.search(r'<section class="panel" id="preview-diff">.*?</section>', page, re.DOTALL).group(0)

    for page in (live, saved):
        diff = diff_of(page)
        assert 'data-field="columns"' in diff
        assert re.search(r'<li class="added">.*?<code>tier</code>', diff, re.DOTALL)
        assert "((" not in diff and "('" not in diff and "None)" not in diff
    assert re.sub(r"\s+", " ", diff_of(live)) == re.sub(r"\s+", " ", diff_of(saved))


def test_a_rename_that_breaks_a_view_shows_the_criteria_and_the_rule_they_matched(metastore, people) -> None:
    """marketing.campaign_performance reads marketing.clicks (external: no data moves): the rename is high risk
    because the view breaks, and the approvals card says which rule matched and why."""
    # given
    client = signed_in(people["steward"])
    statement = "ALTER TABLE marketing.clicks RENAME TO marketing.clicks_v2"

    # when
    live = live_preview(client, metastore, statement)
    request = submitted(people, metastore, statement)
    page = html(client.get(reverse("operations:detail", args=[request.pk])))

    # then
    assert 'id="preview-risk">high risk<' in live
    assert re.search(r'data-criterion="views_broken">.*?views broken.*?campaign_performance', live, re.DOTALL)
    assert request.risk == "high" and request.required_approvals == 2
    card = re.search(r'id="approval-policy">(.*?)</p>', page, re.DOTALL).group(1)
    assert "rule “high risk” matched by views broken" in card
    assert "data_moved" not in card  # the criteria that fired, not the rule's whole list


def test_viewers_are_not_offered_new_requests(metastore, people) -> None:
    """Neither "+ New request" in the top bar, nor "New request" on the lists, nor "Request a change…" on a table."""
    # given
    viewer, steward = signed_in(people["viewer"]), signed_in(people["steward"])
    table = reverse("catalog:table", args=[metastore.name, "sales", "customers"])

    # when
    pages = {
        "viewer": html(viewer.get(reverse("operations:list"))),
        "steward": html(steward.get(reverse("operations:list"))),
    }
    viewer_table, steward_table = html(viewer.get(table)), html(steward.get(table))

    # then
    assert 'class="nav-new"' not in pages["viewer"] and 'id="list-new-request"' not in pages["viewer"]
    assert 'class="nav-new"' in pages["steward"] and 'id="list-new-request"' in pages["steward"]
    assert 'id="request-change"' not in viewer_table and 'id="request-change"' in steward_table


def test_the_table_page_offers_its_requests_in_its_head_not_after_every_panel(metastore, people) -> None:
    """The head of a table's page, before the columns, offers "Request a change…" (and on a partitioned table
    "Drop partitions…"), not the end of the page (issue 29)."""
    # given
    steward = signed_in(people["steward"])

    # when
    orders = html(steward.get(reverse("catalog:table", args=[metastore.name, "sales", "orders"])))
    customers = html(steward.get(reverse("catalog:table", args=[metastore.name, "sales", "customers"])))

    # then
    head = re.search(r'<div class="page-head">.*?id="columns"', orders, re.DOTALL).group(0)
    assert 'id="request-change"' in head and 'id="request-repair"' in head
    drop = re.search(r'href="([^"]+)" id="request-drop-partitions"', head).group(1)
    assert unescape(drop).endswith(f"?metastore={metastore.name}&table=sales.orders&operation=partition_drop")
    assert 'id="request-change"' in customers and 'id="request-drop-partitions"' not in customers
    assert orders.count('id="request-change"') == 1


def test_a_partition_page_offers_requests_on_that_partition_whose_statements_preview(metastore, people) -> None:
    """A partition's page has actions (issue 29): drop, rename and truncate that partition, each a guided request
    whose statement names it and previews; a viewer is offered none."""
    # given
    steward, viewer = signed_in(people["steward"]), signed_in(people["viewer"])
    url = reverse("catalog:partition", args=[metastore.name, "sales", "orders", "dt=2024-01-02/hour=3"])

    # when
    page, viewer_page = html(steward.get(url)), html(viewer.get(url))

    # then
    head = page.split('<div class="page-head">')[1].split('<div class="summary">')[0]
    drop = unescape(re.search(r'href="([^"]+)" id="partition-partition_drop"', head).group(1))
    assert 'id="partition-partition_rename"' in head and 'id="partition-truncate"' in head
    assert 'id="partition-actions"' not in viewer_page
    form = html(steward.get(drop))
    statement = "ALTER TABLE `sales`.`orders` DROP IF EXISTS PARTITION (`dt`='2024-01-02', `hour`='3')"
    assert escape(statement) in form
    preview = live_preview(steward, metastore, statement)
    assert 'id="preview-partitions"' in preview and 'data-partition="dt=2024-01-02/hour=3"' in preview


def test_a_refused_action_is_in_the_audit_log_with_its_error_code(metastore, people) -> None:
    """Approving one's own request is refused, and the refusal is a record of the hash chain."""
    # given
    request = submitted(people, metastore)
    client = signed_in(people["admin"])  # an admin is an approver too, but not of their own request
    own = submitted({"steward": people["admin"]}, metastore)

    # when
    response = client.post(reverse("operations:approve", args=[own.pk]), {"comment": "mine"}, follow=True)
    with pytest.raises(ApplicationError):
        change_request_approve(request=request, user=people["viewer"])

    # then
    assert "four-eyes" in html(response)
    refused = list(AuditRecord.objects.filter(outcome="refused").order_by("id"))
    assert [(r.action, r.request_id_ref, r.actor, r.details["code"]) for r in refused] == [
        ("approve", own.pk, "admin", "self_approval_forbidden"),
        ("approve", request.pk, "viewer", "permission_denied"),
    ]
    assert refused[0].statement == own.statement and refused[0].table_name == "customers"
    assert verify_audit_chain() == []


def test_a_rejected_request_is_revised_and_resubmitted_keeping_its_history(metastore, people) -> None:
    """The requester takes the rejected request back as a draft, gives it a new statement and reason (a new
    preview) and submits it again; the rejection stays as a comment and in the audit log."""
    # given
    request = submitted(people, metastore)
    change_request_reject(request=request, user=people["approver"], comment="use the team tag instead")
    client = signed_in(people["steward"])
    page = html(client.get(reverse("operations:detail", args=[request.pk])))

    # when
    revised = client.post(reverse("operations:revise", args=[request.pk]))
    edited = client.post(
        reverse("operations:edit", args=[request.pk]),
        {"metastore": metastore.name, "statement": "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='crm')",
         "reason": "the team tag, as asked"},
    )  # fmt: skip
    resubmitted = client.post(reverse("operations:submit", args=[request.pk]))

    # then
    assert 'id="action-revise"' in page
    assert revised.status_code == 302 and revised["Location"] == reverse("operations:edit", args=[request.pk])
    assert edited.status_code == 302 and resubmitted.status_code == 302
    request.refresh_from_db()
    assert (request.state, request.reason) == ("submitted", "the team tag, as asked")
    assert "'team'='crm'" in request.statement and request.approvals.count() == 0
    assert [c.body for c in request.comments.all()] == ["Rejected before revision: use the team tag instead"]
    actions = list(AuditRecord.objects.filter(request_id_ref=request.pk).values_list("action", flat=True))
    assert actions == ["create", "submit", "reject", "revise", "edit", "submit"]
    # the approver who rejected decides again, on the new preview
    approved = change_request_approve(request=request, user=people["approver"], comment="ok now")
    assert approved.state == "approved"


def test_only_the_requester_revises_and_only_a_rejected_request(metastore, people) -> None:
    """Another steward is refused (and the refusal is audited); a submitted request is not revised."""
    # given
    request = submitted(people, metastore)

    # when
    other = signed_in(people["steward2"]).post(reverse("operations:revise", args=[request.pk]), follow=True)
    early = signed_in(people["steward"]).post(reverse("operations:revise", args=[request.pk]), follow=True)

    # then
    assert "Only the requester can revise" in html(other)
    assert request.__class__.objects.get(pk=request.pk).state == "submitted"
    codes = list(AuditRecord.objects.filter(action="revise").values_list("outcome", "details__code"))
    assert codes == [("refused", "permission_denied"), ("refused", "invalid_state")]
    assert early.status_code == 200


def test_request_a_change_starts_a_guided_request_with_a_statement_that_parses(metastore, people) -> None:
    """From a table, the form opens with an operation picker and a prefilled statement whose preview shows (no
    parse error); each operation's statement previews on this very table."""
    # given
    client = signed_in(people["steward"])
    url = reverse("operations:new")

    # when
    page = html(client.get(url, {"metastore": metastore.name, "table": "sales.orders"}))
    drop = html(client.get(url, {"metastore": metastore.name, "table": "sales.orders", "operation": "partition_drop"}))

    # then
    picker = re.search(r'<nav class="panel guided" id="guided-picker".*?</nav>', page, re.DOTALL).group(0)
    keys = re.findall(r'data-operation="(\w+)"', picker)
    assert keys == ["properties", "rename", "add_columns", "change_column", "replace_columns", "location",
                    "relocate", "concatenate", "convert", "partition_rename", "partition_drop", "partition_add",
                    "msck_repair", "analyze_stale", "analyze_columns_stale", "drop", "truncate"]  # fmt: skip
    assert 'id="parse-error"' not in page and 'id="preview"' in page
    assert "SET TBLPROPERTIES" in re.search(r'<textarea name="statement"[^>]*>(.*?)</textarea>', page, re.DOTALL).group(
        1
    )
    assert "DROP IF EXISTS PARTITION (`dt`=" in drop and 'id="parse-error"' not in drop
    for statement in re.findall(r'data-statement="([^"]*)"', picker):
        assert 'id="parse-error"' not in live_preview(client, metastore, unescape(statement)), statement


def test_a_view_is_offered_the_alter_view_forms(metastore, people) -> None:
    """A view's guided request starts with ALTER VIEW, as Hive asks."""
    # when
    page = html(
        signed_in(people["steward"]).get(
            reverse("operations:new"), {"metastore": metastore.name, "table": "marketing.campaign_performance"}
        )
    )

    # then
    assert re.findall(r'data-operation="(\w+)"', page) == ["properties", "rename", "drop"]
    assert "ALTER VIEW `marketing`.`campaign_performance` SET TBLPROPERTIES" in page
    assert 'id="preview-blockers"' not in page


def test_a_scheduled_request_past_its_time_says_how_late_it_is(metastore, people) -> None:
    """On the request page and in the lists: "Late by N min", not "Scheduled"."""
    # given
    request = submitted(people, metastore)
    request = change_request_approve(request=request, user=people["approver"], comment="ok")
    ChangeRequest.objects.filter(pk=request.pk).update(
        state="scheduled", scheduled_for=timezone.now() - timedelta(minutes=3, seconds=10)
    )
    client = signed_in(people["steward"])

    # when
    page = html(client.get(reverse("operations:detail", args=[request.pk])))
    listing = html(client.get(reverse("operations:list")))

    # then
    assert re.search(r'id="state-badge">Late by 3 min<', page)
    assert re.search(rf'data-request="{request.pk}">.*?data-state="scheduled">Late by 3 min<', listing, re.DOTALL)


def test_the_api_schema_shows_in_a_browser_and_downloads_for_tools(people) -> None:
    """A browser is sent to the Swagger UI page; tools and ?format= still get the document."""
    # given
    client = signed_in(people["viewer"])

    # when
    browser = client.get("/api/schema/", headers={"Accept": BROWSER_ACCEPT})
    tool = client.get("/api/schema/", headers={"Accept": "*/*"})
    as_json = client.get("/api/schema/?format=json", headers={"Accept": BROWSER_ACCEPT})  # a link to the JSON

    # then
    assert browser.status_code == 302 and browser["Location"] == reverse("api:docs")
    assert tool.status_code == 200 and tool.content.startswith(b"openapi:")
    assert as_json.status_code == 200 and as_json.json()["openapi"].startswith("3.")


def test_a_drop_partition_preview_lists_what_goes_with_rows_bytes_and_the_datas_fate(metastore, people) -> None:
    """The live preview names each dropped partition with its rows and size, the totals, and where the data goes."""
    # when
    page = live_preview(
        signed_in(people["steward"]), metastore, "ALTER TABLE sales.orders DROP PARTITION (dt='2024-01-01')"
    )

    # then
    section = re.search(r'<section class="panel" id="preview-partitions">.*?</section>', page, re.DOTALL).group(0)
    assert re.findall(r'data-partition="([^"]+)"', section) == [f"dt=2024-01-01/hour={h}" for h in (0, 3, 6, 9)]
    assert re.search(r'id="partition-totals">4 partitions · \d+ rows · [\d.]+ [KM]?i?B<', section)
    assert "to the trash: " in section and "never deletes data" in section and "fs.trash.interval" in section
    assert 'data-criterion="partitions_dropped"' in page and 'id="preview-risk">high risk<' in page


def test_a_viewer_posting_a_request_anyway_is_refused_and_audited(metastore, people) -> None:
    """The form posted by hand: refused with the lifecycle's words (403), nothing created, the refusal audited."""
    # when
    response = signed_in(people["viewer"]).post(
        reverse("operations:new"), {"metastore": metastore.name, "statement": SET_PROPERTY, "reason": "mine"}
    )

    # then
    assert response.status_code == 403 and "Only stewards can request changes." in html(response)
    assert not ChangeRequest.objects.exists()
    refused = AuditRecord.objects.get(outcome="refused")
    assert (refused.action, refused.actor, refused.details["code"]) == ("create", "viewer", "permission_denied")
    assert (refused.database_name, refused.table_name) == ("sales", "customers")


@pytest.mark.parametrize(
    "metastore_alias", ["hive31_pg", pytest.param("hive40_pg", marks=pytest.mark.matrix)], indirect=True
)
def test_a_transactional_table_is_offered_a_compaction_request_that_previews(metastore, people) -> None:
    """The picker offers "Request a compaction" for transactional tables only: a partition of a partitioned table
    (Hive requires one), one without a queued request; it previews with no parse error and no blocker, and 'minor'
    edited in previews too."""
    # given
    client = signed_in(people["steward"])
    url = reverse("operations:new")

    # when
    page = html(client.get(url, {"metastore": metastore.name, "table": "ops.job_runs_acid", "operation": "compaction"}))
    plain = html(client.get(url, {"metastore": metastore.name, "table": "sales.orders"}))

    # then
    assert 'data-operation="compaction"' in page and 'data-operation="compaction"' not in plain
    assert 'data-operation="relocate"' in plain and 'data-operation="relocate"' not in page  # no rewrite of ACID files
    assert 'data-operation="concatenate"' in plain and 'data-operation="concatenate"' not in page
    statement = unescape(re.search(r'<textarea name="statement"[^>]*>(.*?)</textarea>', page, re.DOTALL).group(1))
    assert re.fullmatch(r"ALTER TABLE `ops`.`job_runs_acid` PARTITION \(`dt`='[^']+', `hour`='\d+'\) COMPACT 'major'",
                        statement.strip()), statement  # fmt: skip
    for edited in (statement, statement.replace("'major'", "'minor'")):
        preview = live_preview(client, metastore, edited)
        assert 'id="parse-error"' not in preview and 'id="preview-blockers"' not in preview, edited
        assert "compaction requested" in preview
