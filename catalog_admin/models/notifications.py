"""The metastore's notification log (events replicated by Hive's listeners)."""

from django.db import models

from catalog_admin.models.base import HiveModel
from catalog_admin.schema import versioned

__all__ = ("NotificationEvent", "NotificationSequence")


class NotificationEvent(HiveModel):
    """NOTIFICATION_LOG: one metastore event (CREATE_TABLE, ALTER_TABLE, ADD_PARTITION …)."""

    id = models.BigIntegerField(primary_key=True, db_column="NL_ID")
    event_id = models.BigIntegerField(db_column="EVENT_ID")
    event_time = models.IntegerField(db_column="EVENT_TIME")
    event_type = models.CharField(max_length=32, db_column="EVENT_TYPE")
    catalog_name = versioned(models.CharField(max_length=256, null=True, db_column="CAT_NAME"), since="3.0.0")
    db_name = models.CharField(max_length=128, null=True, db_column="DB_NAME")
    table_name = models.CharField(max_length=256, null=True, db_column="TBL_NAME")
    message = models.TextField(null=True, db_column="MESSAGE")
    message_format = models.CharField(max_length=16, null=True, db_column="MESSAGE_FORMAT")

    class Meta(HiveModel.Meta):
        db_table = "NOTIFICATION_LOG"


class NotificationSequence(HiveModel):
    """NOTIFICATION_SEQUENCE: the single row holding the next event id."""

    id = models.BigIntegerField(primary_key=True, db_column="NNI_ID")
    next_event_id = models.BigIntegerField(db_column="NEXT_EVENT_ID")

    class Meta(HiveModel.Meta):
        db_table = "NOTIFICATION_SEQUENCE"
