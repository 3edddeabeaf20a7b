"""
The change-kind seam (``operations/changes/``): every operation kind has exactly one registered change kind, an
unknown one is refused naming it, job kinds are named for what they do, every kind goes through the same
change-request services, and no service or page names a kind.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, ClassVar

import pytest
from django.contrib.auth.models import User

from catalog_admin.db import allow_metastore_writes
from catalog_admin.errors import ApplicationError, ErrorCode
from catalog_admin.models import Table, TableParam
from catalog_admin.selectors.metastores import Metastore
from operations.changes import ChangeKind, change_kind, register_change_kind, registered_kinds
from operations.choices import JobKind, JobState
from operations.database_specs import DATABASE_SPEC_KINDS
from operations.ddl.parser import parse_alter
from operations.models import ChangeRequest, Execution, Job
from operations.services.change_requests import (
    change_request_approve,
    change_request_create,
    change_request_execute,
    change_request_revert,
    change_request_submit,
)
from operations.specs import SPEC_KINDS
from tests.operations.services.test_rewrite import DAY, ORDERS, split_into_small_files

ROOT = Path(__file__).resolve().parents[2]
PROPERTIES = "ALTER TABLE sales.customers SET TBLPROPERTIES ('team'='seam')"
CONCATENATE = "ALTER TABLE sales.orders PARTITION (dt='2024-01-02') CONCATENATE"  # DAY's partition


def test_an_operation_of_no_registered_kind_is_refused_naming_it() -> None:
    """``truncate`` is no kind: invalid_parameter naming it and the known kinds; no operation at all likewise."""
    # when
    with pytest.raises(ApplicationError) as unknown:
        change_kind({"kind": "truncate", "target": {"database": "sales", "table": "orders"}})
    with pytest.raises(ApplicationError) as missing:
        change_kind(None)
    # then
    assert unknown.value.code == ErrorCode.INVALID_PARAMETER
    assert "'truncate'" in unknown.value.message and "merge" in unknown.value.message
    assert unknown.value.details == {"kind": "truncate"}
    assert missing.value.code == ErrorCode.INVALID_PARAMETER and missing.value.details == {"kind": None}


def test_every_operation_kind_has_its_change_kind() -> None:
    """Every ALTER statement kind, a revert, both merge kinds, the database statements and both privilege kinds are
    handled; the data jobs by the data-job kind, the database statements (and their revert) by the database kind."""
    # when
    kinds = registered_kinds()
    # then
    assert set(kinds) == {
        *SPEC_KINDS,
        "revert",
        "merge",
        "merge_revert",
        *DATABASE_SPEC_KINDS,
        "privilege",
        "privilege_revert",
    }
    assert {name for name, kind in kinds.items() if kind == "database"} == set(DATABASE_SPEC_KINDS)
    assert kinds["privilege"] == kinds["privilege_revert"] == "privilege"
    data_jobs = {name for name, kind in kinds.items() if kind == "data_job"}
    assert data_jobs == {"relocate", "compact_files", "convert_format", "analyze"}
    assert kinds["revert"] == kinds["rename_table"] == "alter"


class _Impostor(ChangeKind):
    name = "impostor"
    operation_kinds: ClassVar[tuple[str, ...]] = ("merge",)

    def preview(self, metastore: str | None, operation: Any) -> Any:
        raise NotImplementedError

    def plan(self, request: ChangeRequest) -> Any:
        raise NotImplementedError

    def subject(self, plan: Any) -> Any:
        raise NotImplementedError

    def revert_plan(self, execution: Any) -> Any:
        raise NotImplementedError

    def job_kind(self, request: ChangeRequest) -> str:
        return "impostor"


def test_a_second_kind_cannot_take_an_operation_kind() -> None:
    """Registering another kind for ``merge`` is refused; the merge kind keeps it."""
    # when
    with pytest.raises(ValueError, match="'merge' is handled by 'merge' already"):
        register_change_kind(_Impostor())
    # then
    assert change_kind({"kind": "merge"}).name == "merge"


@pytest.mark.parametrize(
    ("operation", "preview", "job_kind"),
    [
        ({"kind": "set_owner"}, {}, "alter"),
        ({"kind": "revert", "execution_id": 1}, {}, "alter"),
        ({"kind": "relocate"}, {"data_copy": {"files": 3}}, "relocate"),
        ({"kind": "compact_files"}, {"data_copy": {"files": 3}}, "compact"),
        ({"kind": "convert_format"}, {"data_copy": {"files": 3}}, "convert"),
        ({"kind": "merge"}, {}, "merge"),
        ({"kind": "merge_revert", "execution": 1}, {}, "merge_revert"),
        ({"kind": "analyze"}, {"data_copy": {"files": 3}}, "analyze"),
        ({"kind": "create_database"}, {}, "database"),
        ({"kind": "revert_database"}, {}, "database"),
        ({"kind": "privilege"}, {}, "privilege"),
        ({"kind": "privilege_revert"}, {}, "privilege"),
    ],
)
def test_job_kinds_are_named_for_what_they_do(operation: dict, preview: dict, job_kind: str) -> None:
    """The request's change kind names its job kind (design.md): a CONCATENATE is a ``compact`` job, not a
    ``relocate`` one."""
    # given
    request = ChangeRequest(operation=operation, preview=preview)
    # then
    assert change_kind(operation).job_kind(request) == job_kind


def test_a_merge_takes_no_statement_and_its_revert_is_not_reverted() -> None:
    """A merge draft cannot be given an ALTER statement, and the revert of a merge's revert is refused naming why."""
    # given
    request = ChangeRequest(pk=7, operation={"kind": "merge"})
    # when
    with pytest.raises(ApplicationError) as edited:
        change_kind(request.operation).replan(request, parse_alter(PROPERTIES).as_dict())
    with pytest.raises(ApplicationError) as reverted:
        change_kind({"kind": "merge_revert"}).revert_plan(Execution(pk=9, operation={"kind": "merge_revert"}))
    # then
    assert edited.value.code == ErrorCode.INVALID_PARAMETER and edited.value.details == {"parameter": "statement"}
    assert reverted.value.code == ErrorCode.INVALID_STATE
    assert reverted.value.message.startswith("Execution #9 reverted a merge: it cannot be reverted in turn")


@pytest.mark.django_db
def test_a_request_of_no_registered_kind_is_refused_and_nothing_is_stored(people: dict[str, User]) -> None:
    """change_request_create with an unknown operation: invalid_parameter, no request."""
    # when
    with pytest.raises(ApplicationError) as error:
        change_request_create(user=people["steward"], operation={"kind": "truncate"})
    # then
    assert error.value.code == ErrorCode.INVALID_PARAMETER and error.value.details == {"kind": "truncate"}
    assert not ChangeRequest.objects.exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_jobs")
def test_an_alter_goes_through_the_services_by_its_operation(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """Created from its stored operation (as any kind is), an ALTER is refused stale while the table changed, runs as
    the ``alter`` job (``execute_change_request`` until the runner's rename), and its revert request runs too."""
    # given
    operation = parse_alter(PROPERTIES).as_dict()
    request = change_request_create(user=people["steward"], metastore=metastore.name, operation=operation)
    request = change_request_submit(request=request, user=people["steward"])
    table = Table.objects.on(metastore).get(database__name="sales", name="customers")
    with allow_metastore_writes():  # rolled back after the test
        param = TableParam.objects.using(metastore.alias).create(table=table, key="changed_by_hive", value="1")
    # when
    with pytest.raises(ApplicationError) as stale:
        change_request_approve(request=request, user=people["approver"])
    with allow_metastore_writes():
        TableParam.objects.using(metastore.alias).filter(table=table, key=param.key).delete()
    request = _approved(request, people)
    with django_capture_on_commit_callbacks(execute=True):
        request = change_request_execute(request=request, user=people["steward"])
    # then
    assert stale.value.code == ErrorCode.STALE_PREVIEW
    assert stale.value.message.startswith(f"sales.customers changed since request #{request.pk} was previewed; ")
    assert any(change["label"].startswith("Table parameters") for change in stale.value.details["changed"])
    request.refresh_from_db()
    assert (request.state, Job.objects.get(change_request=request).kind) == ("succeeded", JobKind.ALTER)
    # when
    revert = change_request_revert(request=request, user=people["steward"], reason="undo")
    revert = _approved(change_request_submit(request=revert, user=people["steward"]), people)
    with django_capture_on_commit_callbacks(execute=True):
        change_request_execute(request=revert, user=people["steward"])
    # then
    request.refresh_from_db()
    assert revert.operation["kind"] == "revert" and request.state == "reverted"
    assert not TableParam.objects.using(metastore.alias).filter(table=table, key="team", value="seam").exists()


@pytest.mark.django_db
@pytest.mark.usefixtures("warehouse")
def test_a_data_job_goes_through_the_same_services_and_queues_its_job_kind(
    metastore: Metastore, people: dict[str, User], django_capture_on_commit_callbacks
) -> None:
    """A CONCATENATE, created from its operation like any kind, is a ``compact`` job running the rewrite program."""
    # given
    split_into_small_files(metastore, "sales.orders", DAY, "parquet", ORDERS)
    operation = parse_alter(CONCATENATE).as_dict()
    request = change_request_create(user=people["steward"], metastore=metastore.name, operation=operation)
    request = _approved(change_request_submit(request=request, user=people["steward"]), people)
    # when
    with django_capture_on_commit_callbacks(execute=True):
        request = change_request_execute(request=request, user=people["steward"])
    # then
    job = Job.objects.get(change_request=request)
    assert change_kind(request.operation).job_kind(request) == "compact"
    assert (request.state, job.kind, job.program) == ("executing", JobKind.COMPACT, "rewrite")
    assert job.state == JobState.QUEUED


def _approved(request: ChangeRequest, people: dict[str, User]) -> ChangeRequest:
    for name in ("approver", "approver2")[: request.required_approvals]:
        request = change_request_approve(request=request, user=people[name])
    return request


# No service or page names a kind -------------------------------------------------------------------------------------

KIND_NAMES = {
    "MergeChange", "MergeRevertChange", "is_merge", "merge_staleness", "AlterKind", "DataJobKind", "DatabaseKind",
    "PrivilegeKind",
}  # fmt: skip
KIND_MODULES = ("operations.merge", "operations.services.alter_kind", "operations.services.database_kind")


def kind_references(path: Path) -> list[str]:
    """Imports of a kind's module (module level or in a function) and names of a kind's types in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            modules = []
        found += [f"{path.name}:{node.lineno} imports {m}" for m in modules if m.startswith(KIND_MODULES)]
        if isinstance(node, ast.Name | ast.alias | ast.Attribute):
            name = node.id if isinstance(node, ast.Name) else node.name if isinstance(node, ast.alias) else node.attr
            if name in KIND_NAMES:
                found.append(f"{path.name}:{getattr(node, 'lineno', '?')} names {name}")
    return found


def services_and_pages(root: Path) -> list[Path]:
    """The change-request services, the lifecycle, the pages and the API views (the kinds' own modules aside)."""
    kinds = {"alter_kind.py", "database_kind.py", "privilege_kind.py"}
    paths = [p for p in sorted((root / "operations/services").glob("*.py")) if p.name not in kinds]
    paths += sorted((root / "operations/views").glob("*.py"))
    return [*paths, root / "operations/lifecycle.py", *sorted((root / "operations/api/views").glob("*.py"))]


def test_no_service_or_page_names_a_kind() -> None:
    """No service, lifecycle rule, page or API view imports ``operations.merge`` or a kind module, or names a kind's
    plan type (they ask ``operations.changes``)."""
    # when
    found = [ref for path in services_and_pages(ROOT) for ref in kind_references(path)]
    # then
    assert found == []


def test_the_seam_imports_no_service_and_no_kind() -> None:
    """``operations/changes/`` sits below the services and the kinds: it imports neither."""
    # when
    imported = [
        node.module
        for path in sorted((ROOT / "operations/changes").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module
    ]
    # then
    assert not [m for m in imported if m.startswith(("operations.services", "operations.merge", "operations.views"))]


def import_graph(root: Path) -> dict[str, set[str]]:
    """Every import between modules of ``operations`` and ``catalog_admin`` (module level and in functions)."""
    modules = {}
    for path in [*root.glob("operations/**/*.py"), *root.glob("catalog_admin/**/*.py")]:
        if "migrations" not in path.parts:
            name = ".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__")
            modules[name] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:  # a submodule imported by name, else the module itself
                    full = f"{node.module}.{alias.name}"
                    graph[name] |= {full} if full in modules else {node.module} if node.module in modules else set()
            elif isinstance(node, ast.Import):
                graph[name] |= {alias.name for alias in node.names if alias.name in modules}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_no_import_circle_runs_through_the_merge_or_the_change_request_service() -> None:
    """The 18-module circle between ``operations.merge`` and the services is gone: neither the merge nor the
    change-request service is in any circle (``tests/test_layers.py`` holds every module to none)."""
    # when
    found = cycles(import_graph(ROOT))
    # then
    assert not [c for c in found if any(m.startswith("operations.merge") for m in c)]
    assert not [c for c in found if "operations.services.change_requests" in c]
