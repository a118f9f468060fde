# Per-item tallies of numeric answer values, kept by PostgreSQL triggers (see models.ItemTally).

import django.db.models.deletion
from django.db import migrations, models

# Every number at an answer's top level ("quality") or one level down ("rubric/C7").
LEAVES = """
CREATE OR REPLACE FUNCTION campaigns_answer_leaves(answers jsonb)
RETURNS TABLE (path text, val text) LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT e.key, e.value #>> '{}' FROM jsonb_each(answers) e
    WHERE jsonb_typeof(e.value) = 'number'
    UNION ALL
    SELECT e.key || '/' || n.key, n.value #>> '{}' FROM jsonb_each(answers) e
    CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(e.value) = 'object'
                                       THEN e.value ELSE '{}'::jsonb END) n
    WHERE jsonb_typeof(n.value) = 'number'
$$;
"""

# Adds two tallies key by key; values that reach 0 and parts left empty are dropped.
MERGE = """
CREATE OR REPLACE FUNCTION campaigns_tally_merge(t jsonb, delta jsonb)
RETURNS jsonb LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(jsonb_object_agg(path, vals), '{}'::jsonb) FROM (
        SELECT path, jsonb_object_agg(val, n) AS vals FROM (
            SELECT p.key AS path, v.key AS val, sum(v.value::bigint) AS n
            FROM (SELECT key, value FROM jsonb_each(coalesce(t, '{}'::jsonb))
                  UNION ALL
                  SELECT key, value FROM jsonb_each(coalesce(delta, '{}'::jsonb))) p
            CROSS JOIN LATERAL jsonb_each_text(p.value) v
            GROUP BY 1, 2 HAVING sum(v.value::bigint) <> 0) x
        GROUP BY path) y
$$;
"""

# Per item, the change a set of annotation rows (`changes`: item, campaign, worker, answers,
# sign) makes to its tally; attention/gold items and LLM judges are left out.
DELTAS = """
WITH changes AS ({changes}),
leaves AS (
    SELECT c.item_id, c.campaign_id, l.path, l.val, sum(c.sign) AS n
    FROM changes c
    JOIN campaigns_item i ON i.id = c.item_id AND i.control = ''
    JOIN campaigns_worker w ON w.id = c.worker_id AND w.platform <> 'llm'
    CROSS JOIN LATERAL campaigns_answer_leaves(c.answers) l
    GROUP BY 1, 2, 3, 4 HAVING sum(c.sign) <> 0
),
deltas AS (
    SELECT item_id, campaign_id, jsonb_object_agg(path, vals) AS delta FROM (
        SELECT item_id, campaign_id, path, jsonb_object_agg(val, n) AS vals
        FROM leaves GROUP BY 1, 2, 3) p
    GROUP BY 1, 2
)
"""

# New ratings may create a tally row; removals only change existing rows (an item being
# deleted has its tally deleted too, and must not get a new one).
UPSERT = DELTAS + """
INSERT INTO campaigns_itemtally AS t (item_id, campaign_id, counts)
SELECT item_id, campaign_id, campaigns_tally_merge('{{}}'::jsonb, delta) FROM deltas
ORDER BY item_id
ON CONFLICT (item_id) DO UPDATE SET counts = campaigns_tally_merge(t.counts, EXCLUDED.counts);
"""
SUBTRACT = DELTAS + """
UPDATE campaigns_itemtally t SET counts = campaigns_tally_merge(t.counts, d.delta)
FROM deltas d WHERE t.item_id = d.item_id;
"""
ROWS = "SELECT item_id, campaign_id, worker_id, answers, {sign} AS sign FROM {table}"

TRIGGER_FUNCTION = f"""
CREATE OR REPLACE FUNCTION campaigns_annotation_tally() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        {UPSERT.format(changes=ROWS.format(sign=1, table='new_rows'))}
    ELSIF TG_OP = 'UPDATE' THEN
        {UPSERT.format(changes=ROWS.format(sign=-1, table='old_rows') + ' UNION ALL '
                                + ROWS.format(sign=1, table='new_rows'))}
    ELSE
        {SUBTRACT.format(changes=ROWS.format(sign=-1, table='old_rows'))}
    END IF;
    RETURN NULL;
END
$$;
"""

TRIGGERS = """
CREATE TRIGGER campaigns_annotation_tally_insert AFTER INSERT ON campaigns_annotation
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION campaigns_annotation_tally();
CREATE TRIGGER campaigns_annotation_tally_update AFTER UPDATE ON campaigns_annotation
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION campaigns_annotation_tally();
CREATE TRIGGER campaigns_annotation_tally_delete AFTER DELETE ON campaigns_annotation
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION campaigns_annotation_tally();
"""

BACKFILL = UPSERT.format(changes=ROWS.format(sign=1, table="campaigns_annotation"))

DROP = """
DROP TRIGGER IF EXISTS campaigns_annotation_tally_insert ON campaigns_annotation;
DROP TRIGGER IF EXISTS campaigns_annotation_tally_update ON campaigns_annotation;
DROP TRIGGER IF EXISTS campaigns_annotation_tally_delete ON campaigns_annotation;
DROP FUNCTION IF EXISTS campaigns_annotation_tally();
DROP FUNCTION IF EXISTS campaigns_tally_merge(jsonb, jsonb);
DROP FUNCTION IF EXISTS campaigns_answer_leaves(jsonb);
"""


def install(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return  # SQLite: no tallies; agreement reads the answers themselves
    for sql in (LEAVES, MERGE, TRIGGER_FUNCTION, TRIGGERS, BACKFILL):
        schema_editor.execute(sql)


def uninstall(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP)


class Migration(migrations.Migration):

    dependencies = [
        ('campaigns', '0005_assignment_code'),
    ]

    operations = [
        migrations.CreateModel(
            name='ItemTally',
            fields=[
                ('item', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='tally', serialize=False, to='campaigns.item')),
                ('counts', models.JSONField(default=dict)),
                ('campaign', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='campaigns.campaign')),
            ],
        ),
        migrations.RunPython(install, uninstall),
    ]
