"""
The home page (``operations:home``): the work of one metastore for the signed-in user, and approving from it.
The anomaly query (``operations.work.partition_anomalies``) is checked against the partitions' own locations.
"""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.db import connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from catalog_admin.hive.locations import is_under
from catalog_admin.models import Partition, Table
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest
from operations.services.change_requests import change_request_approve, change_request_create, change_request_submit
from operations.work import anomaly_sql, metastore_work, partition_anomalies
from tests.fixtures.factories import html

pytestmark = pytest.mark.django_db(databases="__all__")

SET_PROPERTY = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='growth')"


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def section(page: str, name: str) -> str:
    return re.search(rf'<section class="panel" id="home-{name}">.*?</section>', page, re.DOTALL).group(0)


def request_of(people, metastore, who: str = "steward", submit: bool = True) -> ChangeRequest:
    draft = change_request_create(user=people[who], metastore=metastore.name, spec=parse_alter(SET_PROPERTY))
    return change_request_submit(request=draft, user=people[who]) if submit else draft


def test_the_home_page_shows_each_kind_of_work_to_the_right_person(metastore, people) -> None:
    """The approver sees what waits for them; the steward their drafts, what is approved and what is scheduled
    (late ones say so)."""
    # given
    waiting = request_of(people, metastore)
    draft = request_of(people, metastore, submit=False)
    approved = change_request_approve(request=request_of(people, metastore), user=people["approver"])
    late = change_request_approve(request=request_of(people, metastore), user=people["approver"])
    ChangeRequest.objects.filter(pk=late.pk).update(
        state="scheduled", scheduled_for=timezone.now() - timedelta(minutes=5)
    )
    url = reverse("operations:home") + f"?metastore={metastore.name}"

    # when
    approver_page = html(signed_in(people["approver"]).get(url))
    steward_page = html(signed_in(people["steward"]).get(url))

    # then
    assert f'data-request="{waiting.pk}"' in section(approver_page, "waiting")
    assert f'id="home-approve-{waiting.pk}"' in approver_page
    assert 'data-request="' not in section(steward_page, "waiting")  # nobody approves their own
    assert f'data-request="{draft.pk}"' in section(steward_page, "drafts")
    assert f'data-request="{draft.pk}"' not in section(approver_page, "drafts")
    assert f'data-request="{approved.pk}"' in section(steward_page, "approved")
    assert re.search(rf'data-request="{late.pk}">.*?Late by 5 min', section(steward_page, "scheduled"), re.DOTALL)


def test_home_lists_never_load_the_requests_stored_previews(metastore, people) -> None:
    """Issue 29: a stored preview can be megabytes (a range drop of 100,000 partitions); Home's lists of drafts,
    rejected, approved and scheduled requests leave it unread, like the request list."""
    # given
    draft = request_of(people, metastore, submit=False)
    approved = change_request_approve(request=request_of(people, metastore), user=people["approver"])

    # when
    work = metastore_work(metastore, people["steward"])

    # then
    listed = {r.pk: r for r in (*work.drafts, *work.approved)}
    assert {draft.pk, approved.pk} <= set(listed)
    assert all("preview" in r.get_deferred_fields() for r in listed.values())


def test_an_approver_approves_from_the_home_page_and_comes_back_to_it(metastore, people) -> None:
    """The home page's Approve posts the approval and returns to the home page with the outcome."""
    # given
    request = request_of(people, metastore)
    client = signed_in(people["approver"])
    home = reverse("operations:home") + f"?metastore={metastore.name}"

    # when
    response = client.post(
        reverse("operations:approve", args=[request.pk]), {"comment": "checked", "next": home}, follow=True
    )
    foreign = client.post(reverse("operations:approve", args=[request.pk]), {"next": "https://example.org/"})

    # then
    assert response.redirect_chain[-1][0] == home
    assert f"Request #{request.pk} is approved" in html(response)
    request.refresh_from_db()
    assert request.state == "approved"
    assert foreign["Location"] == reverse("operations:detail", args=[request.pk])  # no redirect off the console


def test_the_anomalies_are_the_tables_with_partitions_outside_their_root(metastore) -> None:
    """Counted per table in one statement, they match the partitions' own locations checked one by one."""
    # given
    alias = metastore.alias
    roots = {
        t.id: (t.database.name, t.name, t.sd.location) for t in Table.objects.on(metastore, "database", "sd") if t.sd_id
    }
    expected: dict[tuple[str, str], int] = {}
    for table_id, location in Partition.objects.using(alias).values_list("table_id", "sd__location"):
        database, name, root = roots.get(table_id, (None, None, None))
        if location and root and not is_under(location, root):
            expected[(database, name)] = expected.get((database, name), 0) + 1

    # when
    found = partition_anomalies(metastore, limit=50)

    # then
    assert expected  # the seed relocates some partitions
    assert {(a.database, a.table): a.outside_root for a in found} == expected
    assert [a.outside_root for a in found] == sorted((a.outside_root for a in found), reverse=True)
    assert len(partition_anomalies(metastore, limit=1)) == 1


@pytest.mark.parametrize("metastore_alias", ["hive31_pg"], indirect=True)  # PostgreSQL's EXPLAIN
def test_the_anomaly_statement_is_one_grouped_pass_with_a_limit(metastore) -> None:
    """EXPLAIN: a single aggregate under a LIMIT (no per-table query), at most one scan of PARTITIONS."""
    # given
    sql, params = anomaly_sql(metastore, 10)

    # when
    with connections[metastore.alias].cursor() as cursor:
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(str(row[0]) for row in cursor.fetchall())

    # then
    assert plan.lstrip().startswith("Limit")
    assert "Aggregate" in plan
    assert plan.count('Seq Scan on "PARTITIONS"') <= 1


def test_the_home_page_loads_its_anomaly_panel_after_itself(metastore, people) -> None:
    """The page names the panel's URL (htmx, on load); the panel links each table with its count."""
    # given
    client = signed_in(people["viewer"])

    # when
    page = html(client.get(reverse("operations:home"), {"metastore": metastore.name}))
    panel = html(client.get(reverse("operations:home_anomalies"), {"metastore": metastore.name}))

    # then
    url = reverse("operations:home_anomalies") + f"?metastore={metastore.name}"
    assert f'hx-get="{url}" hx-trigger="load"' in page
    table = reverse("catalog:table", args=[metastore.name, "sales", "orders"])
    assert re.search(
        rf'data-table="sales.orders">\s*<td><a href="{table}">sales.orders</a></td>\s*<td class="num">2<', panel
    )


def test_the_approve_card_shows_the_reason_the_risk_criteria_and_the_partition_count(metastore, people) -> None:
    """What an approver weighs before a one-click approval is on the card: the requester's reason, every risk
    criterion that fired with its explanation, and how many partitions the change affects."""
    # given
    spec = parse_alter("ALTER TABLE sales.orders DROP PARTITION (dt < '2024-01-03')")
    draft = change_request_create(user=people["steward"], metastore=metastore.name, spec=spec, reason="old days")
    request = change_request_submit(request=draft, user=people["steward"])
    url = reverse("operations:home") + f"?metastore={metastore.name}"

    # when
    card = section(html(signed_in(people["approver"]).get(url)), "waiting")

    # then
    count = request.preview["affected"]["count"]
    assert count >= 1
    assert re.search(rf'id="home-reason-{request.pk}"><span class="muted">Reason:</span> old days', card)
    assert re.search(rf'id="home-partitions-{request.pk}">{count} partitions?<', card)
    criteria = [c["name"] for c in request.preview["criteria"]]
    assert criteria and re.findall(r'<li data-criterion="(\w+)">', card) == criteria


def test_a_stewards_submitted_requests_wait_on_others_on_their_home(metastore, people) -> None:
    """The steward's own submitted requests show under "Mine, waiting on others" with the approvals given; nobody
    else's are there."""
    # given
    mine = request_of(people, metastore)
    other = request_of(people, metastore, who="admin")
    url = reverse("operations:home") + f"?metastore={metastore.name}"

    # when
    page = html(signed_in(people["steward"]).get(url))

    # then
    submitted = section(page, "submitted")
    assert f'data-request="{mine.pk}"' in submitted and f'data-request="{other.pk}"' not in submitted
    assert re.search(rf'data-request="{mine.pk}">.*?0 of {mine.required_approvals} approval', submitted, re.DOTALL)


def test_sign_in_lands_on_home(people) -> None:
    """After signing in the user sees their work (Home), not the metastore list."""
    # given
    people["steward"].set_password("a-long-test-password-1")
    people["steward"].save()

    # when
    response = Client().post(
        reverse("login"), {"username": people["steward"].username, "password": "a-long-test-password-1"}
    )

    # then
    assert response.status_code == 302 and response["Location"] == reverse("operations:home")


def test_a_data_jobs_execution_took_its_spark_jobs_time_not_only_its_swaps(metastore, people) -> None:
    """Issue 29: Home said a 2.5-minute relocation "took 565 ms", the swap's own execution time."""
    # given
    from operations.choices import JobState
    from operations.models import Execution, Job

    request = request_of(people, metastore)
    execution = Execution.objects.create(
        metastore=metastore.name, database_name="sales", table_name="customers", statement=SET_PROPERTY,
        operation={}, preview={}, fingerprint="f", actor="steward", source="ui", state="succeeded", duration_ms=565,
    )  # fmt: skip
    ChangeRequest.objects.filter(pk=request.pk).update(execution=execution, state="succeeded")
    end = timezone.now()
    Job.objects.create(kind="relocate", program="relocate", change_request=request, state=JobState.SUCCEEDED,
                       started_at=end - timedelta(seconds=150), finished_at=end)  # fmt: skip
    plain = Execution.objects.create(
        metastore=metastore.name, database_name="sales", table_name="customers", statement=SET_PROPERTY,
        operation={}, preview={}, fingerprint="g", actor="steward", source="cli", state="succeeded", duration_ms=40,
    )  # fmt: skip
    url = reverse("operations:home") + f"?metastore={metastore.name}"

    # when
    executions = section(html(signed_in(people["steward"]).get(url)), "executions")

    # then
    row = re.search(rf'data-execution="{execution.pk}">.*?</tr>', executions, re.DOTALL).group(0)
    assert '<span data-took="job">2 min 30 s</span>' in row and "(Spark job; swap 565 ms)" in row
    other = re.search(rf'data-execution="{plain.pk}">.*?</tr>', executions, re.DOTALL).group(0)
    assert 'data-took="job"' not in other and "40 ms" in other
