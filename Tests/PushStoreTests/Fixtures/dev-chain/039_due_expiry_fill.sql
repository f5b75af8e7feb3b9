-- pushq:no-transaction
-- pushq schema, version 39: the expiry of the entries of pushq.due made before schema 37.
--
-- Walks pushq.due by primary key in batches of 1 000, each committed on its own (a DO block run
-- outside a transaction may commit), and copies each waiting row's expires_at to its entry: one
-- batch holds the locks of 1 000 entries for the milliseconds it takes (a claim that takes one of
-- them waits that long); producers insert on. Entries made since schema 37 already have it.
DO $$
DECLARE
    last_id bigint := 0;
    batch_last bigint;
BEGIN
    LOOP
        SELECT max(b.id) INTO batch_last FROM (SELECT d.id FROM pushq.due d WHERE d.id > last_id ORDER BY d.id LIMIT 1000) b;
        EXIT WHEN batch_last IS NULL;
        UPDATE pushq.due d SET expires_at = n.expires_at
          FROM pushq.notifications n
         WHERE d.id > last_id AND d.id <= batch_last AND n.id = d.id
           AND n.status IN ('queued', 'retrying') AND n.expires_at IS NOT NULL AND d.expires_at IS NULL;
        last_id := batch_last;
        COMMIT;
    END LOOP;
END $$
