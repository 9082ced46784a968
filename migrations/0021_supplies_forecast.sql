-- The supplies forecast (issue 32): what an item will be used for, from the stays on the books,
-- and an alert when the projected balance falls below the item's minimum.

-- An item's own use, besides what task rules' consumables draw: per stay (on its checkout day)
-- and per occupied night.
ALTER TABLE inventory_items
    ADD COLUMN use_per_stay  numeric(15, 3) CHECK (use_per_stay >= 0),
    ADD COLUMN use_per_night numeric(15, 3) CHECK (use_per_night >= 0);

ALTER TABLE inventory_alerts DROP CONSTRAINT inventory_alerts_type_check;
ALTER TABLE inventory_alerts ADD CONSTRAINT inventory_alerts_type_check
    CHECK (type IN ('LOW_STOCK', 'CONDITION', 'EXPIRY', 'FORECAST_SHORTAGE'));
-- A FORECAST_SHORTAGE alert's figures, as the forecast report shows them: the balance projected
-- at the end of FORECAST_ALERT_DAYS (unbounded: a projection may pass any stored quantity) and
-- the day the stock runs out (null when it lasts the window).
ALTER TABLE inventory_alerts
    ADD COLUMN projected_balance numeric,
    ADD COLUMN run_out_date      date;

-- The forecast reads a villa's stays through its listings: by listing and dates.
CREATE INDEX IF NOT EXISTS pms_reservations_listing_stay
    ON pms_reservations (listing_pms_id, check_out, check_in) WHERE status IN ('CONFIRMED', 'OWNER_STAY');
