-- Villas, their listings and a year of stays for bench/turnovers.sh, written straight into the
-- tables the management API and the PMS sync fill (their own speed is other benches' subject).
--   psql -v villas=500 -v today=2026-05-01 -v back=180 -v ahead=185 -f bench/turnovers_seed.sql
-- Villa v (uuid 00000000-0000-7000-8000-<v>) has listing pms_id v linked to it. Its stays follow
-- one another from :today - :back to :today + :ahead: stay n (pms_id v * 100000 + n) lasts 1 to 4
-- nights, or 7 to 14 for one stay in twelve (the long stays a MID_STAY rule counts), and the next
-- checks in the day it checks out (a same-day turnover, one time in three) or the day after; so
-- about 95 stays a villa. Statuses: 90 % CONFIRMED, 5 % OWNER_STAY, 5 % CANCELLED. The raw
-- record is '{}' (no updatedOn: any webhook delivery is newer).
\set ON_ERROR_STOP on
INSERT INTO villas (id, villa_code, villa_name, bedrooms, bathrooms, max_guests, property_type, status)
SELECT ('00000000-0000-7000-8000-' || lpad(v::text, 12, '0'))::uuid, 'TO-' || lpad(v::text, 4, '0'),
       'Villa ' || lpad(v::text, 4, '0'), 3, 2, 6, 'VILLA', 'APPROVED'
FROM generate_series(1, :villas) AS v;

INSERT INTO pms_listings (id, pms_id, name, status, bedrooms, location, currency, internal_name, raw, synced_at, villa_id)
SELECT gen_random_uuid(), v, format('Bench villa %s', lpad(v::text, 4, '0')), 'ACTIVE', 3, 'Bali, Indonesia',
       'THB', NULL, '{}'::jsonb, now(), ('00000000-0000-7000-8000-' || lpad(v::text, 12, '0'))::uuid
FROM generate_series(1, :villas) AS v;

INSERT INTO pms_reservations (id, pms_id, listing_pms_id, guest_name, check_in, check_out, nights, channel,
    total_amount, net_amount, currency, status, pms_status, raw, synced_at)
SELECT gen_random_uuid(), s.v * 100000 + s.n, s.v, format('Guest %s-%s', s.v, s.n),
       s.check_in, s.check_in + s.len, s.len,
       (ARRAY['AIRBNB', 'BOOKING_COM', 'VRBO', 'EXPEDIA', 'DIRECT', 'GOOGLE', 'OTHER'])[1 + (s.n * 7 + s.v) % 7],
       s.len * 2500, round(s.len * 2500 * 0.85, 2), 'THB',
       CASE WHEN s.h < 90 THEN 'CONFIRMED' WHEN s.h < 95 THEN 'OWNER_STAY' ELSE 'CANCELLED' END,
       CASE WHEN s.h < 90 THEN 'new' WHEN s.h < 95 THEN 'ownerStay' ELSE 'cancelled' END,
       '{}'::json, now()
FROM (
    SELECT v, n, len, h,
           -- Forward from :today - :back by the stays and gaps before it (numbers below n).
           :'today'::date - :back + (sum(len + gap) OVER (PARTITION BY v ORDER BY n) - len - gap)::int AS check_in
    FROM (
        SELECT v, n,
               CASE WHEN (n * 7919 + v * 31) % 12 = 0 THEN 7 + (n * 13 + v) % 8 ELSE 1 + (n * 7919 + v * 31) % 4 END AS len,
               CASE WHEN (n * 104729 + v) % 3 = 0 THEN 0 ELSE 1 END AS gap,
               (n * 37 + v * 11) % 100 AS h
        FROM generate_series(1, :villas) AS v CROSS JOIN generate_series(1, 200) AS n
    ) AS raw
) AS s
WHERE s.check_in <= :'today'::date + :ahead;

VACUUM (ANALYZE) villas;
VACUUM (ANALYZE) pms_listings;
VACUUM (ANALYZE) pms_reservations;
