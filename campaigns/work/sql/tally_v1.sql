-- Per-item tallies of human ratings (table campaigns_itemtally), kept by statement triggers
-- on campaigns_annotation, so that every write path (worker pages, API, erasure, deletes,
-- raw SQL) keeps them exact.
--
-- Rules:
-- - a tally counts, per item, how many annotations gave each value of each numeric answer
--   part: every number at an answer's top level ("quality") or one level down
--   ("rubric/C7"), as {"<path>": {"<value>": n}};
-- - attention-check and gold items (control <> '') and LLM judges (platform 'llm') are
--   not counted;
-- - an insert adds, a delete subtracts, an update does both; counts that reach 0 and parts
--   left empty are dropped;
-- - removals only change existing rows: an item being deleted loses its tally with it and
--   must not get a new one.

-- Every number at an answer's top level ("quality") or one level down ("rubric/C7").
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

-- Adds two tallies key by key; values that reach 0 and parts left empty are dropped. A loop
-- over the change's keys (one or two for a rating), not a regrouping of both tallies.
CREATE OR REPLACE FUNCTION campaigns_tally_merge(t jsonb, delta jsonb)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
    p text;
    vals jsonb;
    v text;
    n text;
    part jsonb;
    total bigint;
BEGIN
    t := coalesce(t, '{}'::jsonb);
    FOR p, vals IN SELECT key, value FROM jsonb_each(coalesce(delta, '{}'::jsonb)) LOOP
        part := coalesce(t -> p, '{}'::jsonb);
        FOR v, n IN SELECT key, value FROM jsonb_each_text(vals) LOOP
            total := coalesce((part ->> v)::bigint, 0) + n::bigint;
            IF total = 0 THEN
                part := part - v;
            ELSE
                part := part || jsonb_build_object(v, total);
            END IF;
        END LOOP;
        IF part = '{}'::jsonb THEN
            t := t - p;
        ELSE
            t := t || jsonb_build_object(p, part);
        END IF;
    END LOOP;
    RETURN t;
END
$$;

-- The trigger: one inserted row (a worker's answer) takes a fast path of two index probes
-- and one upsert; any other statement aggregates its transition tables set-wise. New
-- ratings may create a tally row; removals only change existing rows.
CREATE OR REPLACE FUNCTION campaigns_annotation_tally() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    single_delta jsonb;
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF (SELECT count(*) FROM new_rows) = 1 THEN
            SELECT n.item_id, n.campaign_id, n.worker_id, n.answers INTO r FROM new_rows n;
            IF EXISTS (SELECT 1 FROM campaigns_item i WHERE i.id = r.item_id AND i.control <> '')
               OR EXISTS (SELECT 1 FROM campaigns_worker w
                          WHERE w.id = r.worker_id AND w.platform = 'llm') THEN
                RETURN NULL;
            END IF;
            SELECT jsonb_object_agg(l.path, jsonb_build_object(l.val, 1)) INTO single_delta
            FROM campaigns_answer_leaves(r.answers) l;
            IF single_delta IS NOT NULL THEN
                INSERT INTO campaigns_itemtally AS t (item_id, campaign_id, counts)
                VALUES (r.item_id, r.campaign_id, single_delta)
                ON CONFLICT (item_id) DO UPDATE
                SET counts = campaigns_tally_merge(t.counts, EXCLUDED.counts);
            END IF;
            RETURN NULL;
        END IF;
        WITH changes AS (
            SELECT item_id, campaign_id, worker_id, answers, 1 AS sign FROM new_rows
        ),
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
        INSERT INTO campaigns_itemtally AS t (item_id, campaign_id, counts)
        SELECT item_id, campaign_id, campaigns_tally_merge('{}'::jsonb, delta) FROM deltas
        ORDER BY item_id
        ON CONFLICT (item_id) DO UPDATE SET counts = campaigns_tally_merge(t.counts, EXCLUDED.counts);
    ELSIF TG_OP = 'UPDATE' THEN
        WITH changes AS (
            SELECT item_id, campaign_id, worker_id, answers, -1 AS sign FROM old_rows
            UNION ALL
            SELECT item_id, campaign_id, worker_id, answers, 1 AS sign FROM new_rows
        ),
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
        INSERT INTO campaigns_itemtally AS t (item_id, campaign_id, counts)
        SELECT item_id, campaign_id, campaigns_tally_merge('{}'::jsonb, delta) FROM deltas
        ORDER BY item_id
        ON CONFLICT (item_id) DO UPDATE SET counts = campaigns_tally_merge(t.counts, EXCLUDED.counts);
    ELSE
        WITH changes AS (
            SELECT item_id, campaign_id, worker_id, answers, -1 AS sign FROM old_rows
        ),
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
        UPDATE campaigns_itemtally t SET counts = campaigns_tally_merge(t.counts, d.delta)
        FROM deltas d WHERE t.item_id = d.item_id;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER campaigns_annotation_tally_insert AFTER INSERT ON campaigns_annotation
    REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION campaigns_annotation_tally();
CREATE TRIGGER campaigns_annotation_tally_update AFTER UPDATE ON campaigns_annotation
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION campaigns_annotation_tally();
CREATE TRIGGER campaigns_annotation_tally_delete AFTER DELETE ON campaigns_annotation
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION campaigns_annotation_tally();
