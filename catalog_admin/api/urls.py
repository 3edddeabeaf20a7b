"""Routes of the read API (versionless, under ``/api/``), its OpenAPI schema and the interactive docs."""

from __future__ import annotations

from django.urls import path, register_converter

from catalog_admin.api import views

__all__ = ("PartitionNameConverter", "app_name", "urlpatterns")

app_name = "api"


class PartitionNameConverter:
    """
    A partition name such as ``dt=2024-01-01/hour=3``: it spans several path segments.

    Clients URL-encode the name (``dt%3D2024-01-01%2Fhour%3D3``); the server decodes it before routing, so the
    converter sees Hive's own spelling (which escapes a ``/`` inside a value as ``%2F``, sent as ``%252F``).
    """

    regex = ".+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


register_converter(PartitionNameConverter, "partition_name")

_TABLE = "metastores/<str:metastore>/databases/<str:database>/tables/<str:table>/"

urlpatterns = [
    path("metastores/", views.MetastoreListView.as_view(), name="metastore-list"),
    path("metastores/<str:metastore>/", views.MetastoreDetailView.as_view(), name="metastore-detail"),
    path("metastores/<str:metastore>/databases/", views.DatabaseListView.as_view(), name="database-list"),
    path(
        "metastores/<str:metastore>/databases/<str:database>/",
        views.DatabaseDetailView.as_view(),
        name="database-detail",
    ),
    path(
        "metastores/<str:metastore>/databases/<str:database>/tables/",
        views.TableListView.as_view(),
        name="table-list",
    ),
    path(_TABLE, views.TableDetailView.as_view(), name="table-detail"),
    path(f"{_TABLE}column-statistics/", views.TableColumnStatisticsView.as_view(), name="table-column-statistics"),
    path(f"{_TABLE}partitions/", views.PartitionListView.as_view(), name="partition-list"),
    path(
        f"{_TABLE}partitions/<partition_name:partition_name>/",
        views.PartitionDetailView.as_view(),
        name="partition-detail",
    ),
    path("search/", views.SearchView.as_view(), name="search"),
    path("schema/", views.SchemaView.as_view(), name="schema"),
    path("docs/", views.DocsView.as_view(), name="docs"),
]
