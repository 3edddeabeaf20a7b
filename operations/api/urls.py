"""Routes of the change-request API under ``/api/``: namespace ``operations_api``."""

from __future__ import annotations

from django.urls import path

from operations.api import access, merges, views
from operations.api.views.notifications import NotificationChoicesView

__all__ = ("app_name", "urlpatterns")

app_name = "operations_api"

_REQUEST = "change-requests/<int:pk>/"

urlpatterns = [
    path("change-requests/", views.ChangeRequestListView.as_view(), name="change-request-list"),
    path(_REQUEST, views.ChangeRequestDetailView.as_view(), name="change-request-detail"),
    path(
        f"{_REQUEST}data-scope-charts/",
        views.ChangeRequestDataScopeChartsView.as_view(),
        name="change-request-data-scope-charts",
    ),
    path(f"{_REQUEST}submit/", views.ChangeRequestSubmitView.as_view(), name="change-request-submit"),
    path(f"{_REQUEST}refresh/", views.ChangeRequestRefreshView.as_view(), name="change-request-refresh"),
    path(f"{_REQUEST}approve/", views.ChangeRequestApproveView.as_view(), name="change-request-approve"),
    path(f"{_REQUEST}reject/", views.ChangeRequestRejectView.as_view(), name="change-request-reject"),
    path(f"{_REQUEST}execute/", views.ChangeRequestExecuteView.as_view(), name="change-request-execute"),
    path(f"{_REQUEST}cancel/", views.ChangeRequestCancelView.as_view(), name="change-request-cancel"),
    path(f"{_REQUEST}revise/", views.ChangeRequestReviseView.as_view(), name="change-request-revise"),
    path(f"{_REQUEST}revert/", views.ChangeRequestRevertView.as_view(), name="change-request-revert"),
    path(f"{_REQUEST}settle/", views.ChangeRequestSettleView.as_view(), name="change-request-settle"),
    path(f"{_REQUEST}approvals/", views.ChangeRequestApprovalsView.as_view(), name="change-request-approvals"),
    path(f"{_REQUEST}comments/", views.ChangeRequestCommentsView.as_view(), name="change-request-comments"),
    path("merges/", merges.MergeCreateView.as_view(), name="merge-create"),
    path("merges/preview/", merges.MergePreviewView.as_view(), name="merge-preview"),
    path("privileges/", access.PrivilegeCreateView.as_view(), name="privilege-create"),
    path("privileges/preview/", access.PrivilegePreviewView.as_view(), name="privilege-preview"),
    path("access-requests/", access.AccessRequestCreateView.as_view(), name="access-request-create"),
    path(
        "access/<str:metastore>/principals/<str:kind>/<str:name>/",
        access.AccessPrincipalView.as_view(),
        name="access-principal",
    ),
    path("access/<str:metastore>/<hive_name:database>/", access.AccessDatabaseView.as_view(), name="access-database"),
    path(
        "access/<str:metastore>/<hive_name:database>/<hive_name:table>/",
        access.AccessTableView.as_view(),
        name="access-table",
    ),
    path("jobs/<int:pk>/", views.JobDetailView.as_view(), name="job-detail"),
    path("jobs/<int:pk>/cancel/", views.JobCancelView.as_view(), name="job-cancel"),
    path("jobs/<int:pk>/resume/", views.JobResumeView.as_view(), name="job-resume"),
    path("account/notifications/", NotificationChoicesView.as_view(), name="notification-choices"),
    path("audit/", views.AuditListView.as_view(), name="audit-list"),
    path("audit/export/", views.AuditExportView.as_view(), name="audit-export"),
    path("audit/<int:pk>/", views.AuditDetailView.as_view(), name="audit-detail"),
]
