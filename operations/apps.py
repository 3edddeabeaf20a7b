from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """The service layer: previews, execution, workflow and jobs that change metastores."""

    name = "operations"
    default_auto_field = "django.db.models.BigAutoField"
