from django.apps import AppConfig
from django.db.backends.signals import connection_created


class CatalogAdminConfig(AppConfig):
    name = "catalog_admin"
    verbose_name = "Catalog admin"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from catalog_admin.db import install_write_guard

        connection_created.connect(install_write_guard, dispatch_uid="catalog_admin.write_guard")
