"""The change-request and audit pages, under ``changes/`` with the ``operations`` namespace."""

from django.urls import path

from operations.views import access, audit, change_requests, home, jobs, lists, merges

app_name = "operations"

urlpatterns = [
    path("", lists.change_request_list, name="list"),
    path("home/", home.home, name="home"),
    path("home/anomalies/", home.home_anomalies, name="home_anomalies"),
    path("inbox/", lists.change_request_inbox, name="inbox"),
    path("mine/", lists.change_request_mine, name="mine"),
    path("new/", change_requests.change_request_new, name="new"),
    path("preview/", change_requests.change_request_preview_partial, name="preview"),
    path("merge/", merges.merge_new, name="merge"),
    path("merge/preview/", merges.merge_preview_partial, name="merge-preview"),
    path("audit/", audit.audit_log, name="audit"),
    path("audit/export.<str:fmt>", audit.audit_export, name="audit_export"),
    path("<int:pk>/", change_requests.change_request_detail, name="detail"),
    path("<int:pk>/edit/", change_requests.change_request_edit, name="edit"),
    path("<int:pk>/submit/", change_requests.change_request_submit_view, name="submit"),
    path("<int:pk>/approve/", change_requests.change_request_approve_view, name="approve"),
    path("<int:pk>/reject/", change_requests.change_request_reject_view, name="reject"),
    path("<int:pk>/refresh/", change_requests.change_request_refresh_view, name="refresh"),
    path("<int:pk>/cancel/", change_requests.change_request_cancel_view, name="cancel"),
    path("<int:pk>/revise/", change_requests.change_request_revise_view, name="revise"),
    path("<int:pk>/revert/", change_requests.change_request_revert_view, name="revert"),
    path("<int:pk>/comment/", change_requests.change_request_comment_view, name="comment"),
    path("<int:pk>/execute/", change_requests.change_request_execute_view, name="execute"),
    path("<int:pk>/schedule/", change_requests.change_request_schedule_view, name="schedule"),
    path("<int:pk>/settle/", change_requests.change_request_settle_view, name="settle"),
    path("<int:pk>/freshness/", change_requests.change_request_freshness, name="freshness"),
    path("<int:pk>/job/", change_requests.change_request_job, name="job"),
    path("access/<str:metastore>/db/<hive_name:database>/", access.access_object, name="access-database"),
    path(
        "access/<str:metastore>/db/<hive_name:database>/t/<hive_name:table>/", access.access_object, name="access-table"
    ),
    path("access/<str:metastore>/principal/<str:kind>/<str:name>/", access.access_principal, name="access-principal"),
    path("access/<str:metastore>/request/", access.access_request, name="access-request"),
    path("access/<str:metastore>/statement/", access.access_statement, name="access-statement"),
    path("jobs/<int:pk>/", jobs.job_detail, name="job-detail"),
    path("jobs/<int:pk>/progress/", jobs.job_progress, name="job-progress"),
    path("jobs/<int:pk>/cancel/", jobs.job_cancel_view, name="job-cancel"),
    path("jobs/<int:pk>/resume/", jobs.job_resume_view, name="job-resume"),
]
