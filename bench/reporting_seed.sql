-- Listings and reservations for bench/reporting.sh, written straight into the tables the PMS sync
-- fills (the sync's own speed is bench/pms.sh's subject).
--   psql -v listings=500 -v first=1 -v last=1000 -f bench/reporting_seed.sql
-- Creates the listings when absent, then stays number :first to :last of each listing. Each
-- listing's stays run back in time from 2026-12-31, one after the other: stay n lasts 1 to 4
-- nights and is followed by a gap of 0 or 1 night, so 1,000 stays cover about eight years and a
-- year holds about 120 a listing. Stay n is the same whichever run writes it, so a second run
-- with :first = 1001 adds older stays. Statuses: 85 % CONFIRMED, 4 % OWNER_STAY, 5 % CANCELLED,
-- 3 % INQUIRY, 3 % PENDING; one listing in ten in USD, the rest THB; one in fifty INACTIVE.
\set ON_ERROR_STOP on
INSERT INTO pms_listings (id, pms_id, name, status, bedrooms, location, currency, internal_name, raw, synced_at)
SELECT gen_random_uuid(), l, format('Bench villa %s', lpad(l::text, 4, '0')),
       CASE WHEN l % 50 = 0 THEN 'INACTIVE' ELSE 'ACTIVE' END, 1 + l % 6, 'Bali, Indonesia',
       CASE WHEN l % 10 = 0 THEN 'USD' ELSE 'THB' END, NULL, '{}'::jsonb, now()
FROM generate_series(1, :listings) AS l
ON CONFLICT (pms_id) DO NOTHING;

INSERT INTO pms_reservations (id, pms_id, listing_pms_id, guest_name, check_in, check_out, nights, channel,
    total_amount, net_amount, currency, status, raw, synced_at)
SELECT gen_random_uuid(), s.l * 100000 + s.n, s.l, format('Guest %s', s.n),
       s.check_out - s.len, s.check_out, s.len,
       (ARRAY['AIRBNB', 'BOOKING_COM', 'VRBO', 'EXPEDIA', 'DIRECT', 'GOOGLE', 'OTHER'])[1 + (s.n * 7 + s.l) % 7],
       s.len * (1500 + (s.l % 40) * 125), round(s.len * (1500 + (s.l % 40) * 125) * 0.85, 2),
       CASE WHEN s.l % 10 = 0 THEN 'USD' ELSE 'THB' END,
       CASE WHEN s.h < 85 THEN 'CONFIRMED' WHEN s.h < 89 THEN 'OWNER_STAY' WHEN s.h < 94 THEN 'CANCELLED'
            WHEN s.h < 97 THEN 'INQUIRY' ELSE 'PENDING' END,
       '{}'::json, now()
FROM (
    SELECT l, n, len, h,
           -- Back from 2026-12-31 by the stays and gaps of the stays after it (numbers below n).
           DATE '2026-12-31' - (sum(len + gap) OVER (PARTITION BY l ORDER BY n) - len - gap)::int AS check_out
    FROM (
        SELECT l, n, 1 + (n * 7919 + l * 31) % 4 AS len, (n * 104729 + l) % 2 AS gap, (n * 37 + l * 11) % 100 AS h
        FROM generate_series(1, :listings) AS l CROSS JOIN generate_series(1, :last) AS n
    ) AS raw
) AS s
WHERE s.n >= :first
ON CONFLICT (pms_id) DO NOTHING;

VACUUM (ANALYZE) pms_reservations;
VACUUM (ANALYZE) pms_listings;
