"""
Tokens of the former Django REST framework ``authtoken`` app (one plaintext key per user) become hashed API tokens
named "legacy token", expiring ``CATALOG_API_TOKEN_TTL_DAYS`` after they were created; the plaintext table is dropped.
A fresh database has no such table: nothing to do.
"""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.db import migrations

LEGACY_TABLE = "authtoken_token"


def import_legacy_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if LEGACY_TABLE not in connection.introspection.table_names():
        return
    quoted, key_column = schema_editor.quote_name(LEGACY_TABLE), schema_editor.quote_name("key")
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {key_column}, user_id, created FROM {quoted}")  # noqa: S608 (fixed names)
        rows = cursor.fetchall()
    ApiToken = apps.get_model("api_tokens", "ApiToken")
    lifetime = timedelta(days=settings.CATALOG_API_TOKEN_TTL_DAYS)
    ApiToken.objects.bulk_create(
        ApiToken(
            user_id=user_id,
            name="legacy token",
            prefix=key[:8],
            digest=hashlib.sha256(key.encode()).hexdigest(),
            created=created,
            expires=created + lifetime,
        )
        for key, user_id, created in rows
    )
    schema_editor.execute(f"DROP TABLE {quoted}")


class Migration(migrations.Migration):
    dependencies = [("api_tokens", "0001_api_tokens")]

    operations = [migrations.RunPython(import_legacy_tokens, migrations.RunPython.noop, elidable=True)]
