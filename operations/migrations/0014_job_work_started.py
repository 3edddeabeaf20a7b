# The moment a Spark job's program first reported (its session up): the start-up before it, the work after it.

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("operations", "0013_notifications"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="work_started_at",
            field=models.DateTimeField(
                blank=True,
                null=True,
                help_text="When this attempt's Spark program first reported (its session up): the start-up before "
                "it, the work after it.",
            ),
        ),
        migrations.AddField(
            model_name="job",
            name="work_bytes_at_start",
            field=models.BigIntegerField(
                blank=True, null=True, help_text="Bytes already done when this attempt's work started (a resumed run's)."
            ),
        ),
    ]
