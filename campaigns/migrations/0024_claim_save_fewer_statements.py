"""campaigns_claim version 4 and campaigns_save_answer version 4: the same rules and results
in fewer statements, and the full-campaign check probing the open items' index from its far
end (campaigns_close_if_full, installed with the save)."""
from django.db import migrations

from campaigns.work.sql import load


class Migration(migrations.Migration):

    dependencies = [
        ("campaigns", "0023_min_annotations_no_floor"),
    ]

    operations = [
        migrations.RunSQL([load("claim", 4)], [load("claim", 3)]),
        migrations.RunSQL([load("save_answer", 4)], [load("save_answer", 3)]),
    ]
