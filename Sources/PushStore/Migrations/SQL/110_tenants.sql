-- pushq:lock-retry lock_timeout=200ms tries=100
-- Fair shares between tenants (issue 48, item 5).
--
-- * pushq.notifications.tenant: whose row it is (a customer of a multi-tenant product), 1–64
--   characters of the lane-name alphabet (^[A-Za-z0-9_.:-]{1,64}$), or NULL (one tenant of its
--   own). Within one lane, this release's claim and its workers take the due rows of different
--   tenants in turn. A malformed value is refused at INSERT and at UPDATE of the column by the
--   trigger function pushq.tenant_shape(), SQLSTATE 23514 under notifications_tenant_shape, its
--   message naming the column. Rows without a tenant do not call it (the trigger's WHEN). A trigger,
--   as 106's time_zone: a CHECK added to the column would be validated by reading the whole table.
-- * pushq.due.tenant: the row's tenant, copied by the due triggers (due_inserted, due_waiting, and
--   notifications_due_tenant for an UPDATE of the column of a waiting row). The index that walks a
--   lane's entries per tenant, due_tenant, is built in 111 (CONCURRENTLY).
--
-- Nothing reads or rewrites a row: the columns are nullable without a default (catalog only).
-- ALTER TABLE and CREATE TRIGGER take ACCESS EXCLUSIVE / SHARE ROW EXCLUSIVE on both tables for an
-- instant, waited for at most 200 ms at a time (lock-retry). No gate: the tenant is only an order.
-- Older workers name neither column: their claim walks due_order and takes a tenant's rows like any
-- other, their upkeep gives a lapsed lease an entry without a tenant (walked as the NULL tenant's).

ALTER TABLE pushq.notifications ADD COLUMN tenant text;

ALTER TABLE pushq.due ADD COLUMN tenant text;

CREATE FUNCTION pushq.tenant_shape() RETURNS trigger
LANGUAGE plpgsql AS $_$
BEGIN
    IF NEW.tenant ~ '^[A-Za-z0-9_.:-]{1,64}$' THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'new row for relation "%" violates check constraint "%": tenant % is not 1 to 64 of A-Z a-z 0-9 _ . : -',
                    TG_TABLE_NAME, TG_TABLE_NAME || '_tenant_shape', quote_literal(left(NEW.tenant, 100))
        USING ERRCODE = 'check_violation', CONSTRAINT = TG_TABLE_NAME || '_tenant_shape', TABLE = TG_TABLE_NAME, SCHEMA = 'pushq',
              COLUMN = 'tenant', HINT = 'A tenant is named like a lane: 1 to 64 characters of letters, digits and _ . : -, or NULL.';
END
$_$;

CREATE TRIGGER notifications_tenant
    BEFORE INSERT OR UPDATE OF tenant ON pushq.notifications
    FOR EACH ROW WHEN (NEW.tenant IS NOT NULL) EXECUTE FUNCTION pushq.tenant_shape();

CREATE OR REPLACE FUNCTION pushq.due_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying, tenant)
    SELECT r.id, r.lane, r.scheduled_at, r.expires_at, r.status = 'retrying', r.tenant FROM inserted_rows r WHERE r.status IN ('queued', 'retrying')
    ON CONFLICT (id) DO NOTHING;
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION pushq.due_waiting() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pushq.due (id, lane, due_at, expires_at, retrying, tenant)
    VALUES (NEW.id, NEW.lane, NEW.scheduled_at, NEW.expires_at, NEW.status = 'retrying', NEW.tenant)
    ON CONFLICT (id) DO UPDATE
       SET lane = EXCLUDED.lane, due_at = EXCLUDED.due_at, expires_at = EXCLUDED.expires_at, retrying = EXCLUDED.retrying,
           tenant = EXCLUDED.tenant, held = NULL;
    RETURN NULL;
END $$;

-- A waiting row given another tenant: its entry follows (its place in due order stays).
CREATE FUNCTION pushq.due_tenant() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE pushq.due SET tenant = NEW.tenant WHERE id = NEW.id AND tenant IS DISTINCT FROM NEW.tenant;
    RETURN NULL;
END $$;

CREATE TRIGGER notifications_due_tenant AFTER UPDATE OF tenant ON pushq.notifications
    FOR EACH ROW
    WHEN (NEW.status IN ('queued', 'retrying') AND OLD.tenant IS DISTINCT FROM NEW.tenant)
    EXECUTE FUNCTION pushq.due_tenant();
