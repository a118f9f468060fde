"""campaigns_claim version 3: a new assignment comes back with its size and its first item's
row, so the start answers with the first item's page without reading it again.

The result's columns change, which CREATE OR REPLACE cannot do: the function is dropped and
created again (both ways).
"""
from django.db import migrations

from campaigns.work.sql import load

DROP_CLAIM = ("DROP FUNCTION IF EXISTS campaigns_claim(bigint, timestamptz, integer, integer, "
              "bigint[], double precision[], jsonb, boolean)")


class Migration(migrations.Migration):

    dependencies = [
        ("campaigns", "0021_statistics_full_recompute"),
    ]

    operations = [
        migrations.RunSQL([DROP_CLAIM, load("claim", 3)], [DROP_CLAIM, load("claim", 2)]),
    ]
