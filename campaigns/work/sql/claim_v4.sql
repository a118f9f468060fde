-- Claiming work: campaigns_claim hands a worker an assignment in one call, and with a new
-- assignment its size and its first item's row: what the first item's page reads, so the
-- start answers with that page without reading it again.
-- Called by campaigns/work/claim.py (_claim_in_database); the caller picks the control items.
-- Version 4: the rules, the result and the statements' plans are those of version 3, in
-- fewer statements: the per-worker count runs only when the campaign sets a cap, and the
-- assignment and its items are inserted by one statement. (Version 3: the result has
-- item_count and first_item, a campaigns_item row, NULL unless 'created'.)
--
-- Rules:
-- - the worker's row is locked for the claim: one worker's concurrent claims (double
--   click, two tabs) take turns;
-- - only a live campaign hands out work (its status is read after the worker's lock);
-- - a returning worker resumes their open assignment (active, before its deadline);
-- - per-worker cap: submitted and open assignments count toward max_assignments_per_worker;
--   expired and returned ones do not;
-- - a campaign stopped at its target (allocation_stopped, set by the allocation job) hands
--   out no new work, as when full; open assignments still resume;
-- - k and the pick order: regular items with a free slot (slots_taken < slots_wanted), the
--   highest priority first (all 0 under uniform allocation; written off the request path by
--   the allocation job), fewest slots taken first within a priority, through the partial
--   index item_open_by_priority;
-- - no repeats: never an item in any of the worker's assignments (any status);
-- - concurrent claims lock different items (SKIP LOCKED), and wait rather than answer "no
--   work" when every candidate is locked; slots are taken by a conditional UPDATE that
--   never passes k (SQLSTATE CL409 otherwise, the whole claim rolls back);
-- - control items (attention checks, gold) hold no slot and go at random positions.
--
-- Each statement takes a fresh snapshot (READ COMMITTED), so the steps see what committed
-- before them, in one round trip.

CREATE OR REPLACE FUNCTION campaigns_claim(
    p_worker bigint,                  -- the worker claiming (locked for the whole claim)
    p_now timestamptz,
    p_items integer,                  -- items_per_assignment
    p_max_assignments integer,        -- max_assignments_per_worker, NULL: no limit
    p_controls bigint[],              -- control items chosen by the caller (no slots)
    p_control_draws double precision[],  -- one number in [0, 1) per control: its position
    p_assignment jsonb,               -- the new assignment's columns except id
    p_holds_slot boolean
) RETURNS TABLE (outcome text, detail text, assignment_id bigint, item_count integer,
                  first_item campaigns_item)
LANGUAGE plpgsql VOLATILE
-- The plans below do not depend on the values; a parameter as LIMIT would otherwise make
-- PostgreSQL plan the pick again on every call (planning costs more than the pick itself).
SET plan_cache_mode = force_generic_plan
AS $$
DECLARE
    v_campaign bigint;
    v_status text;
    v_stopped text;
    v_open bigint;
    v_items bigint[];
    v_order bigint[];
    v_taken integer;
    v_at integer;
    v_row campaigns_assignment%ROWTYPE;
BEGIN
    -- Lock the worker: two claims by one worker (double click, two tabs) would otherwise
    -- both see no open assignment and could both get the same item. The campaign's status
    -- is read after the lock, so a claim that starts after a pause or close hands out
    -- nothing; the campaign row is not locked (a stream of claims would starve the change).
    SELECT c.id, c.status, c.allocation_stopped INTO v_campaign, v_status, v_stopped
      FROM campaigns_worker w JOIN campaigns_campaign c ON c.id = w.campaign_id
     WHERE w.id = p_worker
       FOR NO KEY UPDATE OF w;
    IF v_status IS DISTINCT FROM 'live' THEN
        RETURN QUERY SELECT 'not_live'::text, v_status, NULL::bigint,
                            NULL::integer, NULL::campaigns_item;
        RETURN;
    END IF;

    -- A returning worker resumes where they were.
    SELECT a.id INTO v_open FROM campaigns_assignment a
     WHERE a.worker_id = p_worker AND a.status = 'active' AND a.deadline > p_now
     ORDER BY a.id DESC LIMIT 1;
    IF v_open IS NOT NULL THEN
        RETURN QUERY SELECT 'open'::text, NULL::text, v_open,
                            NULL::integer, NULL::campaigns_item;
        RETURN;
    END IF;

    IF v_stopped <> '' THEN
        RETURN QUERY SELECT 'no_work'::text, NULL::text, NULL::bigint,
                            NULL::integer, NULL::campaigns_item;
        RETURN;
    END IF;

    -- Submitted and open assignments count; expired (even if not yet marked) and returned
    -- ones do not. Without a cap nothing is counted: an expression with a subquery is a
    -- statement of its own (its scan is set up even when never run).
    IF p_max_assignments IS NOT NULL THEN
        IF (SELECT count(*) FROM campaigns_assignment a
             WHERE a.worker_id = p_worker
               AND (a.status = 'submitted' OR (a.status = 'active' AND a.deadline > p_now))
           ) >= p_max_assignments THEN
            RETURN QUERY SELECT 'limit'::text, NULL::text, NULL::bigint,
                                NULL::integer, NULL::campaigns_item;
            RETURN;
        END IF;
    END IF;

    -- The open items this worker has not seen, highest priority and then least-filled first,
    -- through the partial index item_open_by_priority (walked from its start, stopping
    -- after p_items rows:
    -- no scan of the open items). SKIP LOCKED: concurrent claims lock different rows
    -- instead of queueing on the same ones. "Not seen" is `worker <> ALL (the workers of
    -- the item's assignments)`, a probe per candidate through the index on the item, never
    -- a read of the worker's whole history (NOT EXISTS can become an anti-join that does).
    v_items := ARRAY(
        SELECT i.id FROM campaigns_item i
         WHERE i.campaign_id = v_campaign AND i.control = ''
           AND i.slots_taken < i.slots_wanted
           AND p_worker <> ALL (SELECT a.worker_id FROM campaigns_assignmentitem ai
                                  JOIN campaigns_assignment a ON a.id = ai.assignment_id
                                 WHERE ai.item_id = i.id)
         ORDER BY i.priority DESC, i.slots_taken, i.id
         LIMIT p_items
           FOR NO KEY UPDATE SKIP LOCKED);
    IF cardinality(v_items) = 0 THEN
        -- Every candidate is locked by claims in flight (some may roll back): wait for them
        -- rather than wrongly answer "no more work", locking in id order as expiry does,
        -- so the two never wait on each other in a cycle.
        v_items := ARRAY(
        SELECT i.id FROM campaigns_item i
         WHERE i.campaign_id = v_campaign AND i.control = ''
           AND i.slots_taken < i.slots_wanted
           AND p_worker <> ALL (SELECT a.worker_id FROM campaigns_assignmentitem ai
                                  JOIN campaigns_assignment a ON a.id = ai.assignment_id
                                 WHERE ai.item_id = i.id)
         ORDER BY i.id
         LIMIT p_items
           FOR NO KEY UPDATE);
    END IF;
    IF cardinality(v_items) = 0 THEN
        RETURN QUERY SELECT 'no_work'::text, NULL::text, NULL::bigint,
                            NULL::integer, NULL::campaigns_item;
        RETURN;
    END IF;

    -- Take the slots in a statement of its own: it reads the newest version of each locked
    -- row (an expiry may have given a slot back just before the lock). Conditional, so the
    -- database refuses to go past k even if a lock was missed; then the whole claim is
    -- rolled back (SQLSTATE CL409, Conflict in Python).
    UPDATE campaigns_item SET slots_taken = slots_taken + 1
     WHERE id = ANY(v_items) AND slots_taken < slots_wanted;
    GET DIAGNOSTICS v_taken = ROW_COUNT;
    IF v_taken <> cardinality(v_items) THEN
        RAISE EXCEPTION 'The work changed while it was handed out.' USING ERRCODE = 'CL409';
    END IF;

    -- Each control item at a random position among the others (0 = first).
    v_order := v_items;
    FOR k IN 1 .. coalesce(cardinality(p_controls), 0) LOOP
        v_at := floor(p_control_draws[k] * (cardinality(v_order) + 1))::integer;
        v_order := v_order[1:v_at] || p_controls[k] || v_order[v_at + 1:];
    END LOOP;

    v_row := jsonb_populate_record(NULL::campaigns_assignment, p_assignment);
    v_row.id := nextval(pg_get_serial_sequence('campaigns_assignment', 'id'));
    -- The assignment and its items in one statement (the items' foreign key to the
    -- assignment is checked at commit).
    WITH assignment AS (INSERT INTO campaigns_assignment VALUES (v_row.*))
    INSERT INTO campaigns_assignmentitem (assignment_id, item_id, position, holds_slot)
    SELECT v_row.id, t.item_id, t.position, p_holds_slot
      FROM unnest(v_order) WITH ORDINALITY AS t(item_id, position);
    -- The first item as it is now (read after the inserts, in this call's last snapshot).
    RETURN QUERY SELECT 'created'::text, NULL::text, v_row.id, cardinality(v_order), i
                   FROM campaigns_item i WHERE i.id = v_order[1];
END
$$;
