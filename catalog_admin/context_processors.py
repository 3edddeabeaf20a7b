from django.conf import settings
from django.http import HttpRequest


def metastores(request: HttpRequest) -> dict:
    """The registered metastores for the navigation bar."""
    return {
        "registered_metastores": settings.METASTORE_CONFIGS,
        "default_metastore": settings.DEFAULT_METASTORE,
    }
