"""
The project's root URLs, its composition root with ``settings``: the browsing pages and read API of ``catalog_admin``
and, mounted here, the change requests of ``operations`` (pages under ``changes/``, commands under ``api/``).
"""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from catalog_admin import converters  # noqa: F401 (registers hive_name and partition_name)
from catalog_admin.views import acid, data, databases, health, metastores, partitions, search, sign_in, tables, tokens
from operations.views import metrics, notifications

# The browsing pages, under the "catalog" namespace (sign-in lands on "operations:home").
catalog_patterns = [
    path("", metastores.metastore_list, name="metastores"),
    path("search/", search.search, name="search"),
    path("search/suggestions/", search.search_suggestions, name="search-suggestions"),
    path("m/<str:metastore>/", databases.database_list, name="databases"),
    path("m/<str:metastore>/db/<hive_name:database>/", tables.table_list, name="tables"),
    path("m/<str:metastore>/db/<hive_name:database>/t/<hive_name:table>/", tables.table_detail, name="table"),
    path(
        "m/<str:metastore>/db/<hive_name:database>/t/<hive_name:table>/sample/",
        data.table_sample_panel,
        name="table-sample",
    ),
    path(
        "m/<str:metastore>/db/<hive_name:database>/t/<hive_name:table>/partitions/",
        partitions.partition_list,
        name="partitions",
    ),
    path(
        "m/<str:metastore>/db/<hive_name:database>/t/<hive_name:table>/acid/",
        acid.acid_directories,
        name="acid-directories",
    ),
    path("m/<str:metastore>/compaction/", acid.compaction_needs, name="compaction-needs"),
    path(
        "m/<str:metastore>/db/<hive_name:database>/t/<hive_name:table>/partitions/anomalies/",
        partitions.partition_anomalies,
        name="partition-anomalies",
    ),
    path(
        "m/<str:metastore>/db/<hive_name:database>/t/<hive_name:table>/p/<path:partition>/",
        partitions.partition_detail,
        name="partition",
    ),
]

urlpatterns = [
    path("accounts/login/", sign_in.SignInView.as_view(), name="login"),
    path("accounts/oidc/authenticate/", sign_in.oidc_start, name="oidc_authentication_init"),
    path("accounts/oidc/callback/", sign_in.oidc_callback, name="oidc_authentication_callback"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("account/tokens/", tokens.account_tokens, name="account-tokens"),
    path("account/tokens/<int:pk>/revoke/", tokens.account_token_revoke, name="account-token-revoke"),
    path("account/notifications/", notifications.account_notifications, name="account-notifications"),
    path("health/", health.health, name="health"),
    path("metrics", metrics.metrics, name="metrics"),
    path("admin/", admin.site.urls),
    path("api/", include("catalog_admin.api.urls")),
    path("api/", include("operations.api.urls")),
    path("changes/", include("operations.urls", namespace="operations")),
    path("", include((catalog_patterns, "catalog"))),
]

handler404 = "catalog_admin.middleware.api_not_found"
