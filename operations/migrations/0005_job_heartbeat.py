"""Jobs beat while their worker runs them: ``heartbeat_at``, the last progress or log line."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("operations", "0004_execution_marker"),
    ]

    operations = [
        migrations.AddField(
            model_name="job",
            name="heartbeat_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When the worker last reported progress; a silent job counts as dead.",
                null=True,
            ),
        ),
    ]
