# Django gives every unique CharField on PostgreSQL a second, varchar_pattern_ops index for
# LIKE 'prefix%' lookups. Assignment tokens are only ever looked up by equality (the unique
# index serves that), so the pattern index was pure cost: one more entry to write on every
# claim and on every hand-in (the status change makes that update a non-HOT one).

from django.db import migrations

TABLE = "campaigns_assignment"
PATTERN_INDEX = "(token varchar_pattern_ops)"
REVERSE_NAME = "campaigns_assignment_token_like"


def drop(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = %s "
                       "AND indexdef LIKE %s", [TABLE, f"%{PATTERN_INDEX}%"])
        names = [name for (name,) in cursor.fetchall()]
    for name in names:
        schema_editor.execute(f'DROP INDEX IF EXISTS "{name}"')


def recreate(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(
            f'CREATE INDEX IF NOT EXISTS "{REVERSE_NAME}" ON "{TABLE}" {PATTERN_INDEX}')


class Migration(migrations.Migration):

    dependencies = [
        ('campaigns', '0011_tally_merge_plpgsql'),
    ]

    operations = [
        migrations.RunPython(drop, recreate),
    ]
