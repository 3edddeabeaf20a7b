from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """The service layer: previews, execution, workflow and jobs that change metastores."""

    name = "operations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from operations import tasks  # noqa: F401  (hands the job runner its tasks)
        from operations.extensions import register_page_slots
        from operations.merge import jobs  # noqa: F401  (registers the merge job kinds)
        from operations.merge.changes import register_merge_kinds
        from operations.services import (  # noqa: F401  (register the job kinds)
            alter_jobs,
            analyze_jobs,
            database_jobs,
            relocate_jobs,
            spark_jobs,
        )
        from operations.services.alter_kind import register_alter_kinds
        from operations.services.database_kind import register_database_kind
        from operations.services.privilege_kind import register_privilege_kind

        register_alter_kinds()  # the change kinds (operations.changes): the services never name one
        register_merge_kinds()
        register_database_kind()
        register_privilege_kind()  # GRANT/REVOKE and roles, with their job
        # Fill catalog_admin's page slots (top bar, table page): catalog_admin itself never names operations.
        register_page_slots()
