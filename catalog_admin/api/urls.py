"""Routes of the read API (versionless, under ``/api/``), its OpenAPI schema and the interactive docs."""

from __future__ import annotations

from django.urls import path

from catalog_admin import converters  # noqa: F401 (registers hive_name and partition_name)
from catalog_admin.api import acid, data_views, views

__all__ = ("app_name", "urlpatterns")

app_name = "api"


_TABLE = "metastores/<str:metastore>/databases/<hive_name:database>/tables/<hive_name:table>/"

urlpatterns = [
    path("metastores/", views.MetastoreListView.as_view(), name="metastore-list"),
    path("metastores/<str:metastore>/", views.MetastoreDetailView.as_view(), name="metastore-detail"),
    path("metastores/<str:metastore>/databases/", views.DatabaseListView.as_view(), name="database-list"),
    path(
        "metastores/<str:metastore>/databases/<hive_name:database>/",
        views.DatabaseDetailView.as_view(),
        name="database-detail",
    ),
    path(
        "metastores/<str:metastore>/databases/<hive_name:database>/tables/",
        views.TableListView.as_view(),
        name="table-list",
    ),
    path(_TABLE, views.TableDetailView.as_view(), name="table-detail"),
    path(f"{_TABLE}column-statistics/", views.TableColumnStatisticsView.as_view(), name="table-column-statistics"),
    path(f"{_TABLE}sample/", data_views.TableSampleView.as_view(), name="table-sample"),
    path(f"{_TABLE}show-create/", data_views.ShowCreateTableView.as_view(), name="table-show-create"),
    path(f"{_TABLE}partitions/", views.PartitionListView.as_view(), name="partition-list"),
    path(f"{_TABLE}acid-directories/", acid.AcidDirectoryListView.as_view(), name="acid-directory-list"),
    path(f"{_TABLE}acid-delta-charts/", acid.AcidDeltaChartsView.as_view(), name="acid-delta-charts"),
    path(
        "metastores/<str:metastore>/compaction-needs/", acid.CompactionNeedListView.as_view(), name="compaction-needs"
    ),
    path(f"{_TABLE}partition-charts/", data_views.PartitionChartsView.as_view(), name="partition-charts"),
    path(
        f"{_TABLE}partitions/<partition_name:partition_name>/",
        views.PartitionDetailView.as_view(),
        name="partition-detail",
    ),
    path("search/", views.SearchView.as_view(), name="search"),
    path("schema/", views.SchemaView.as_view(), name="schema"),
    path("docs/", views.DocsView.as_view(), name="docs"),
]
