-- pushq:no-transaction
-- pushq schema, version 44: `retrying` for the entries of pushq.due made before schema 43.
--
-- Walks pushq.due by primary key in batches of 1 000, each committed on its own (as 39), and sets
-- each entry whose row waits to whether that row is `retrying`; entries of rows in flight stay
-- NULL. One batch holds the locks of 1 000 entries for the milliseconds it takes (a claim that
-- takes one of them waits that long); producers insert on.
DO $$
DECLARE
    last_id bigint := 0;
    batch_last bigint;
BEGIN
    LOOP
        SELECT max(b.id) INTO batch_last FROM (SELECT d.id FROM pushq.due d WHERE d.id > last_id ORDER BY d.id LIMIT 1000) b;
        EXIT WHEN batch_last IS NULL;
        UPDATE pushq.due d SET retrying = n.status = 'retrying'
          FROM pushq.notifications n
         WHERE d.id > last_id AND d.id <= batch_last AND n.id = d.id
           AND n.status IN ('queued', 'retrying') AND d.retrying IS NULL;
        last_id := batch_last;
        COMMIT;
    END LOOP;
END $$
