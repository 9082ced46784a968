-- Postgres' own figure for what a first turnover generation run writes (bench/turnovers.sh,
-- part 3): the same rows by plain INSERT ... SELECT, in one transaction as the run's: a copy of
-- every generated work order (its villa, stay, rule, due date; its occurrence shifted by
-- 1,000,000 so that the unique index on (rule, stay, occurrence) admits it, and maintained as the
-- run's are), as many checklist items each as its rule holds (generate_series), and one history
-- row each. Starts from a checkpoint, as the run does in bench/turnovers.sh. The copies are
-- deleted afterwards. Prints "work_orders checklist_items history_rows seconds".
--   psql -X -q -tA -F ' ' -f bench/turnovers_insert.sql "$DATABASE_URL"
\set ON_ERROR_STOP on
SET client_min_messages = warning;
SET jit = off;
CHECKPOINT;

DO $bench$
DECLARE
    started timestamptz := clock_timestamp();
    orders bigint;
    items bigint;
    history bigint;
BEGIN
    WITH created AS (
        INSERT INTO work_orders (id, villa_id, title, category, priority, status, assignee_type,
                                 assignee_staff_id, due_date, created_by, source, reservation_id,
                                 task_rule_id, occurrence_index)
        SELECT uuid_v7(), w.villa_id, w.title, w.category, w.priority, 'OPEN', NULL, NULL, w.due_date,
               'bench-insert', 'TURNOVER', w.reservation_id, w.task_rule_id, w.occurrence_index + 1000000
        FROM work_orders w
        WHERE w.source = 'TURNOVER' AND w.created_by = 'turnover-generation'
        ORDER BY w.task_rule_id, w.reservation_id, w.occurrence_index
        RETURNING id, status, task_rule_id
    ),
    checklist AS (
        INSERT INTO work_order_checklist_items (id, work_order_id, position, text, kind, fail_category)
        SELECT uuid_v7(), c.id, p, 'Checklist item ' || p, 'CHECK', 'GENERAL'
        FROM created c
        JOIN task_rules ru ON ru.id = c.task_rule_id
        CROSS JOIN generate_series(0, jsonb_array_length(ru.checklist) - 1) AS p
        RETURNING 1
    ),
    hist AS (
        INSERT INTO work_order_history (id, work_order_id, from_status, to_status, reason, changed_by)
        SELECT uuid_v7(), id, NULL, status, 'turnover', 'bench-insert' FROM created
        RETURNING 1
    )
    SELECT (SELECT count(*) FROM created), (SELECT count(*) FROM checklist), (SELECT count(*) FROM hist)
    INTO orders, items, history;
    COMMIT;
    PERFORM set_config('bench.result', format('%s %s %s %s', orders, items, history,
        round(extract(epoch FROM clock_timestamp() - started)::numeric, 3)), false);
END
$bench$;

SELECT current_setting('bench.result');
DELETE FROM work_orders WHERE created_by = 'bench-insert';
VACUUM ANALYZE work_orders;
VACUUM ANALYZE work_order_checklist_items;
VACUUM ANALYZE work_order_history;
