"""The worker's hot path inside PostgreSQL: the claim, the answer save, the tally triggers.

The function bodies live in campaigns/work/sql/ (one file per unit and version); this
migration installs version 1 of each. A later change adds a file and a migration that
reads it.
"""
from django.db import migrations

from campaigns.work.sql import load

DROP_CLAIM = ("DROP FUNCTION IF EXISTS campaigns_claim(bigint, timestamptz, integer, integer, "
              "bigint[], double precision[], jsonb, boolean)")
DROP_SAVE = ("DROP FUNCTION IF EXISTS campaigns_save_answer(bigint, bigint, timestamptz, jsonb, "
             "boolean, timestamptz, text)")
DROP_TALLY = """
DROP TRIGGER IF EXISTS campaigns_annotation_tally_insert ON campaigns_annotation;
DROP TRIGGER IF EXISTS campaigns_annotation_tally_update ON campaigns_annotation;
DROP TRIGGER IF EXISTS campaigns_annotation_tally_delete ON campaigns_annotation;
DROP FUNCTION IF EXISTS campaigns_annotation_tally();
DROP FUNCTION IF EXISTS campaigns_tally_merge(jsonb, jsonb);
DROP FUNCTION IF EXISTS campaigns_answer_leaves(jsonb);
"""

# Django gives a unique CharField a second, varchar_pattern_ops index for LIKE 'prefix%'.
# Tokens are only looked up by equality (the unique index serves that), so the pattern
# index would be one more entry to write on every claim and every hand-in.
DROP_TOKEN_LIKE = """
DO $$
DECLARE name text;
BEGIN
    FOR name IN SELECT indexname FROM pg_indexes
                 WHERE tablename = 'campaigns_assignment'
                   AND indexdef LIKE '%(token varchar_pattern_ops)%' LOOP
        EXECUTE format('DROP INDEX %I', name);
    END LOOP;
END
$$;
"""
CREATE_TOKEN_LIKE = ('CREATE INDEX IF NOT EXISTS "campaigns_assignment_token_like" '
                     'ON "campaigns_assignment" (token varchar_pattern_ops)')


class Migration(migrations.Migration):

    dependencies = [
        ("campaigns", "0001_initial"),
    ]

    # One-element lists: each file runs as one statement (no splitting inside $$ bodies,
    # no placeholder interpolation of the "%" in them).
    operations = [
        migrations.RunSQL([load("tally", 1)], [DROP_TALLY]),
        migrations.RunSQL([load("claim", 1)], [DROP_CLAIM]),
        migrations.RunSQL([load("save_answer", 1)], [DROP_SAVE]),
        migrations.RunSQL([DROP_TOKEN_LIKE], [CREATE_TOKEN_LIKE]),
    ]
