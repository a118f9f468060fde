-- Saving an answer: campaigns_save_answer stores one item's answers in one call (version 4:
-- the rules of version 3 in fewer statements: the full-campaign check is skipped when the
-- saved item itself still has a free slot, and its probe walks the open items' index from its
-- far end; version 3: a repeat also adds to the free-text
-- answers' provenance; version 2: a repeat adds to the time on task instead of replacing it).
-- Called by campaigns/work/answers.py (_save_in_database) after the answers are validated.
--
-- Rules:
-- - the assignment's row is locked: an expiry must not free the item's slot while the
--   answer is saved, and two saves of one item (double click, retry) become one insert
--   and one update;
-- - answers are saved only while the assignment is active and before its deadline;
-- - one annotation per (assignment, item): a repeat updates the answers, never duplicates;
-- - time on task: a repeat adds its seconds to seconds_spent (the time summed over every
--   save) and keeps seconds_first (the first save's time), so a worker who goes back to
--   change an answer keeps the time already spent;
-- - provenance: a repeat adds its counts (typed, pasted, pastes, ms) to the record of each
--   free-text answer it recorded again, with the answer's new length (chars), and keeps the
--   others: a paste on the first visit still counts after a small edit on the second;
-- - a regular item's annotations_done grows on the first save only; control items hold no
--   slot and keep it at 0;
-- - hand-in: the save that leaves no item unanswered marks the assignment submitted with
--   its completion code, in the same transaction;
-- - a full campaign closes itself: the hand-in that leaves every regular item of a live
--   campaign with its k annotations sets the campaign closed (campaigns_close_if_full,
--   also called by the explicit hand-in in campaigns/work/handin.py).

-- The campaign is full when no regular item has a free slot and every one has its k
-- annotations. While an item has a free slot (the usual case) one probe of the partial index
-- item_open_by_priority answers, with no lock. The probe walks the index from its far end
-- (lowest priority, most slots taken): claims take items from its near end, and every claim
-- leaves a dead entry there until the next vacuum, which a walk from the near end would
-- visit one by one (a heap fetch each). Otherwise the campaign's row is locked before the
-- check: two last hand-ins at once would each miss the other's uncommitted answer and
-- neither would close the campaign; with the lock they take turns, and the later one's
-- UPDATE (a statement of its own, so a fresh snapshot) sees what the earlier committed.
-- The UPDATE is conditional: a campaign paused or closed meanwhile stays as it is.
-- True when this call closed the campaign.
CREATE OR REPLACE FUNCTION campaigns_close_if_full(p_campaign bigint, p_now timestamptz)
RETURNS boolean
LANGUAGE plpgsql VOLATILE
AS $$
DECLARE
    v_closed integer;
BEGIN
    PERFORM 1 FROM campaigns_item i
      WHERE i.campaign_id = p_campaign AND i.control = '' AND i.slots_taken < i.slots_wanted
      ORDER BY i.priority, i.slots_taken DESC, i.id DESC
      LIMIT 1;
    IF FOUND THEN
        RETURN false;
    END IF;
    PERFORM 1 FROM campaigns_campaign c WHERE c.id = p_campaign FOR NO KEY UPDATE;
    UPDATE campaigns_campaign c SET status = 'closed', updated_at = p_now
     WHERE c.id = p_campaign AND c.status = 'live'
       AND NOT EXISTS (SELECT 1 FROM campaigns_item i
                        WHERE i.campaign_id = c.id AND i.control = ''
                          AND (i.slots_taken < i.slots_wanted
                               OR i.annotations_done < i.slots_wanted))
       AND EXISTS (SELECT 1 FROM campaigns_item i
                    WHERE i.campaign_id = c.id AND i.control = '');
    GET DIAGNOSTICS v_closed = ROW_COUNT;
    RETURN v_closed = 1;
END
$$;

CREATE OR REPLACE FUNCTION campaigns_save_answer(
    p_assignment bigint,
    p_item bigint,
    p_now timestamptz,
    p_annotation jsonb,       -- the annotation's columns except id (campaigns_annotation)
    p_count boolean,          -- a regular item: its annotations_done grows on the first save
    p_submitted_at timestamptz,  -- the hand-in's values, used if this save completes the work
    p_completion_code text
) RETURNS TABLE (outcome text, status text, deadline timestamptz, annotation_id bigint,
                 created_at timestamptz, handed_in boolean)
LANGUAGE plpgsql VOLATILE
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_campaign bigint;
    v_status text;
    v_deadline timestamptz;
    v_row campaigns_annotation%ROWTYPE;
    v_id bigint;
    v_created timestamptz;
    v_handed integer;
    v_item_open boolean;  -- this (regular) item still has a free slot
BEGIN
    -- The lock: an expiry or return must not free this item's slot while the answer is
    -- saved (annotations_done would pass slots_taken), two saves of the same item (double
    -- click, retry) become one insert and one update, and the completeness check below sees
    -- every other save of this assignment. Locking returns the row's newest version.
    SELECT a.campaign_id, a.status, a.deadline INTO v_campaign, v_status, v_deadline
      FROM campaigns_assignment a WHERE a.id = p_assignment FOR NO KEY UPDATE;
    IF NOT FOUND THEN
        RETURN QUERY SELECT 'gone'::text, NULL::text, NULL::timestamptz, NULL::bigint,
                            NULL::timestamptz, false;
        RETURN;
    END IF;
    IF v_status <> 'active' OR v_deadline <= p_now THEN
        RETURN QUERY SELECT 'closed'::text, v_status, v_deadline, NULL::bigint,
                            NULL::timestamptz, false;
        RETURN;
    END IF;

    v_row := jsonb_populate_record(NULL::campaigns_annotation, p_annotation);
    v_row.id := nextval(pg_get_serial_sequence('campaigns_annotation', 'id'));
    INSERT INTO campaigns_annotation VALUES (v_row.*)
        ON CONFLICT (assignment_id, item_id) DO NOTHING
        RETURNING id, campaigns_annotation.created_at INTO v_id, v_created;
    IF v_id IS NOT NULL THEN
        IF p_count THEN  -- control items hold no slot: their counter stays 0
            UPDATE campaigns_item SET annotations_done = annotations_done + 1
             WHERE id = p_item
            RETURNING slots_taken < slots_wanted INTO v_item_open;
        END IF;
    ELSE  -- saved before: the answers change, the counter does not
        UPDATE campaigns_annotation an
           SET answers = v_row.answers,
               seconds_spent = CASE WHEN v_row.seconds_spent IS NULL THEN an.seconds_spent
                                    ELSE coalesce(an.seconds_spent, 0) + v_row.seconds_spent END,
               seconds_first = coalesce(an.seconds_first, an.seconds_spent),
               provenance = an.provenance || coalesce((
                   SELECT jsonb_object_agg(e.key, CASE
                       WHEN jsonb_typeof(an.provenance -> e.key) = 'object' THEN
                           e.value || (SELECT jsonb_object_agg(c.name,
                                   coalesce((an.provenance -> e.key ->> c.name)::bigint, 0)
                                   + coalesce((e.value ->> c.name)::bigint, 0))
                               FROM unnest(ARRAY['typed', 'pasted', 'pastes', 'ms']) c(name))
                       ELSE e.value END)
                     FROM jsonb_each(coalesce(v_row.provenance, '{}'::jsonb)) e), '{}'::jsonb),
               control_passed = v_row.control_passed, updated_at = v_row.updated_at
         WHERE an.assignment_id = p_assignment AND an.item_id = p_item
        RETURNING an.id, an.created_at INTO v_id, v_created;
    END IF;

    -- Complete now? This statement's snapshot sees every committed save of the assignment
    -- (they all wait for its lock).
    UPDATE campaigns_assignment
       SET status = 'submitted', submitted_at = p_submitted_at,
           completion_code = p_completion_code
     WHERE id = p_assignment
       AND NOT EXISTS (SELECT 1 FROM campaigns_assignmentitem ai
                        WHERE ai.assignment_id = p_assignment
                          AND NOT EXISTS (SELECT 1 FROM campaigns_annotation an
                                           WHERE an.assignment_id = ai.assignment_id
                                             AND an.item_id = ai.item_id));
    GET DIAGNOSTICS v_handed = ROW_COUNT;
    -- A campaign with an item that has a free slot is not full: when this save's item has
    -- one, the campaign-wide check has nothing to find.
    IF v_handed = 1 AND NOT coalesce(v_item_open, false) THEN
        PERFORM campaigns_close_if_full(v_campaign, p_now);
    END IF;
    -- The result row from the variables (RETURN NEXT), not a query.
    outcome := 'saved';
    status := v_status;
    deadline := v_deadline;
    annotation_id := v_id;
    created_at := v_created;
    handed_in := v_handed = 1;
    RETURN NEXT;
END
$$;
