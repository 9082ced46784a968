-- Postgres' own figure for what a PMS sync writes (bench/pms.sh, part 2): the reservations the
-- sync stored are upserted again into the emptied table by the statement the sync runs
-- (domain::reporting::reservations::upsert_reservations, copied here: keep the two alike), in
-- batches of the sync's page size, each batch its own transaction as the sync commits each page.
-- The rows are first grouped into per-batch arrays, the parameters the worker binds; the timed
-- loop reads each batch's arrays (measured: about 7% of the loop, what receiving the parameters
-- costs the server too) and runs the statement. Leaves the table holding the same rows, and
-- prints "rows seconds".
--   psql -X -q -tA -F ' ' -v page=1000 -f bench/pms_upsert.sql "$DATABASE_URL"
\set ON_ERROR_STOP on
SET client_min_messages = warning;
-- As the sync's page transactions (jobs/src/pms/sync/pages.rs, begin_page): no wait for the commit's flush.
SET synchronous_commit = off;

DROP TABLE IF EXISTS bench_pms_batches;
-- In the order the sync stored them (its ids are UUIDv7, increasing), page by page.
CREATE UNLOGGED TABLE bench_pms_batches AS
SELECT b, array_agg(id ORDER BY n) AS ids, array_agg(pms_id ORDER BY n) AS pms_ids,
       array_agg(listing_pms_id ORDER BY n) AS listing_pms_ids, array_agg(guest_name ORDER BY n) AS guest_names,
       array_agg(check_in ORDER BY n) AS check_ins, array_agg(check_out ORDER BY n) AS check_outs,
       array_agg(nights ORDER BY n) AS nights, array_agg(channel ORDER BY n) AS channels,
       array_agg(channel_id ORDER BY n) AS channel_ids, array_agg(channel_name ORDER BY n) AS channel_names,
       array_agg(total_amount ORDER BY n) AS total_amounts, array_agg(net_amount ORDER BY n) AS net_amounts,
       array_agg(tax_amount ORDER BY n) AS tax_amounts, array_agg(channel_commission ORDER BY n) AS channel_commissions,
       array_agg(hostaway_commission ORDER BY n) AS hostaway_commissions, array_agg(currency ORDER BY n) AS currencies,
       array_agg(status ORDER BY n) AS statuses, array_agg(pms_status ORDER BY n) AS pms_statuses,
       array_agg(raw::text ORDER BY n) AS raws
FROM (SELECT (row_number() OVER (ORDER BY id) - 1) / :page AS b, row_number() OVER (ORDER BY id) AS n, r.*
      FROM pms_reservations r) s
GROUP BY b;
CREATE UNIQUE INDEX ON bench_pms_batches (b);
TRUNCATE pms_reservations;
-- Both figures start from a checkpoint (bench/pms.sh takes one before the sync too).
CHECKPOINT;

DO $bench$
DECLARE
    started timestamptz := clock_timestamp();
    last_batch bigint;
    batch record;
    created bigint;
    updated bigint;
    written bigint := 0;
BEGIN
    SELECT max(b) INTO last_batch FROM bench_pms_batches;
    FOR i IN 0..coalesce(last_batch, -1) LOOP
        SELECT * INTO batch FROM bench_pms_batches WHERE b = i;
        EXECUTE $upsert$WITH upserted AS (
            INSERT INTO pms_reservations AS r (id, pms_id, listing_pms_id, guest_name, check_in, check_out, nights,
                channel, channel_id, channel_name, total_amount, net_amount, tax_amount, channel_commission,
                hostaway_commission, currency, status, pms_status, raw, synced_at)
            SELECT t.id, t.pms_id, t.listing_pms_id, t.guest_name, t.check_in, t.check_out, t.nights,
                   t.channel, t.channel_id, t.channel_name, t.total_amount, t.net_amount, t.tax_amount,
                   t.channel_commission, t.hostaway_commission, t.currency, t.status, t.pms_status, t.raw::json, now()
            FROM unnest($1::uuid[], $2::bigint[], $3::bigint[], $4::text[], $5::date[], $6::date[], $7::int[],
                        $8::text[], $9::bigint[], $10::text[], $11::numeric[], $12::numeric[], $13::numeric[],
                        $14::numeric[], $15::numeric[], $16::text[], $17::text[], $18::text[], $19::text[])
                 AS t (id, pms_id, listing_pms_id, guest_name, check_in, check_out, nights, channel, channel_id,
                       channel_name, total_amount, net_amount, tax_amount, channel_commission,
                       hostaway_commission, currency, status, pms_status, raw)
            ORDER BY t.pms_id
            ON CONFLICT (pms_id) DO UPDATE SET
                listing_pms_id = EXCLUDED.listing_pms_id, guest_name = EXCLUDED.guest_name,
                check_in = EXCLUDED.check_in, check_out = EXCLUDED.check_out, nights = EXCLUDED.nights,
                channel = EXCLUDED.channel, channel_id = EXCLUDED.channel_id, channel_name = EXCLUDED.channel_name,
                total_amount = EXCLUDED.total_amount, net_amount = EXCLUDED.net_amount,
                tax_amount = EXCLUDED.tax_amount, channel_commission = EXCLUDED.channel_commission,
                hostaway_commission = EXCLUDED.hostaway_commission, currency = EXCLUDED.currency,
                status = EXCLUDED.status, pms_status = EXCLUDED.pms_status, raw = EXCLUDED.raw, synced_at = now()
            WHERE (r.listing_pms_id, r.guest_name, r.check_in, r.check_out, r.nights, r.channel, r.channel_id,
                   r.channel_name, r.total_amount, r.net_amount, r.tax_amount, r.channel_commission,
                   r.hostaway_commission, r.currency, r.status, r.pms_status, r.raw::text)
                  IS DISTINCT FROM (EXCLUDED.listing_pms_id, EXCLUDED.guest_name, EXCLUDED.check_in,
                   EXCLUDED.check_out, EXCLUDED.nights, EXCLUDED.channel, EXCLUDED.channel_id,
                   EXCLUDED.channel_name, EXCLUDED.total_amount, EXCLUDED.net_amount, EXCLUDED.tax_amount,
                   EXCLUDED.channel_commission, EXCLUDED.hostaway_commission, EXCLUDED.currency,
                   EXCLUDED.status, EXCLUDED.pms_status, EXCLUDED.raw::text)
            RETURNING xmax = 0 AS inserted)
         SELECT count(*) FILTER (WHERE inserted), count(*) FILTER (WHERE NOT inserted) FROM upserted$upsert$
        INTO created, updated
        USING batch.ids, batch.pms_ids, batch.listing_pms_ids, batch.guest_names, batch.check_ins,
              batch.check_outs, batch.nights, batch.channels, batch.channel_ids, batch.channel_names,
              batch.total_amounts, batch.net_amounts, batch.tax_amounts, batch.channel_commissions,
              batch.hostaway_commissions, batch.currencies, batch.statuses, batch.pms_statuses, batch.raws;
        written := written + created + updated;
        COMMIT;
    END LOOP;
    PERFORM set_config('bench.rows', written::text, false);
    PERFORM set_config('bench.seconds', round(extract(epoch FROM clock_timestamp() - started)::numeric, 3)::text, false);
END
$bench$;

DROP TABLE bench_pms_batches;
SELECT current_setting('bench.rows'), current_setting('bench.seconds');
