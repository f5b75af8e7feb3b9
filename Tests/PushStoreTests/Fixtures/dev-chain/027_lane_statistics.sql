-- pushq schema, version 27: the planner counts lanes as several, even when one lane fills the table.
--
-- The claim takes each lane's due rows through notifications_lane_due (lane, scheduled_at, id).
-- PostgreSQL can also walk notifications_due (scheduled_at, id) and keep the rows of the lane,
-- and it picks the cheaper of the two by its estimate of the lane's share of the rows. When
-- ANALYZE sampled a table that a campaign fills, the statistics hold one lane: every lane is then
-- estimated at the whole table, the two walks cost the same, and PostgreSQL took the smaller
-- index. A password reset in `default`, due after the campaign's rows, was then found by walking
-- past every waiting campaign row: 60-100 ms per claim instead of 10 on 200 000 rows, for as long
-- as the statistics stayed (docs/performance.md, "A campaign's statistics, and claims planned
-- once").
--
-- n_distinct = 10 tells ANALYZE to record ten lanes, whatever its sample held: a lane is then
-- estimated at a tenth of the rows at most, and the walk by lane wins by that factor. It changes
-- nothing a query returns. ALTER TABLE ... SET (n_distinct) and ANALYZE take SHARE UPDATE
-- EXCLUSIVE, which no INSERT, claim or write-back waits for; ANALYZE of one column reads a sample
-- of 30 000 rows, about a second on a table of millions.
--
-- The setting is read by the next ANALYZE. The column is analysed now only if the table has
-- statistics already (reltuples >= 0): a table never analysed (a new install) keeps PostgreSQL's
-- estimate for it, at least ten pages, until autovacuum first analyses it, as before this file.
ALTER TABLE pushq.notifications ALTER COLUMN lane SET (n_distinct = 10);
DO $$
BEGIN
    IF (SELECT reltuples FROM pg_class WHERE oid = 'pushq.notifications'::regclass) >= 0 THEN
        ANALYZE pushq.notifications (lane);
    END IF;
END
$$;
