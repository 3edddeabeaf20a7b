from django.apps import AppConfig


class ApiTokensConfig(AppConfig):
    name = "catalog_admin.tokens"
    label = "api_tokens"
    verbose_name = "API tokens"
    default_auto_field = "django.db.models.BigAutoField"
