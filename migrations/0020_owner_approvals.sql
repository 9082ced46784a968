-- Repair costs and the owner's approval (issue 32). A work order has cost lines; the owner-billed
-- estimate above the villa's approval threshold (the villa's own, else its owner's) holds the work
-- order in AWAITING_APPROVAL until the owner approves through a signed link or a manager records an
-- approval given by phone.

ALTER TABLE owners
    ADD COLUMN approval_threshold_amount   numeric(14, 2) CHECK (approval_threshold_amount >= 0),
    ADD COLUMN approval_threshold_currency text CHECK (approval_threshold_currency ~ '^[A-Z]{3}$'),
    -- Of the net revenue of the owner's villas: the owner statement's management fee.
    ADD COLUMN management_fee_percent      numeric(5, 2) CHECK (management_fee_percent BETWEEN 0 AND 100),
    ADD CONSTRAINT owners_threshold_whole
        CHECK ((approval_threshold_amount IS NULL) = (approval_threshold_currency IS NULL));

ALTER TABLE villas
    ADD COLUMN approval_threshold_amount   numeric(14, 2) CHECK (approval_threshold_amount >= 0),
    ADD COLUMN approval_threshold_currency text CHECK (approval_threshold_currency ~ '^[A-Z]{3}$'),
    ADD CONSTRAINT villas_threshold_whole
        CHECK ((approval_threshold_amount IS NULL) = (approval_threshold_currency IS NULL));

ALTER TABLE work_orders DROP CONSTRAINT work_orders_status_check;
ALTER TABLE work_orders ADD CONSTRAINT work_orders_status_check
    CHECK (status IN ('OPEN', 'ASSIGNED', 'IN_PROGRESS', 'ON_HOLD', 'AWAITING_APPROVAL', 'COMPLETED', 'CANCELLED'));
ALTER TABLE work_orders
    -- Where an approval (or the estimate falling back under the threshold) returns it.
    ADD COLUMN status_before_approval text,
    -- An emergency's work order needs no approval; set when it would have.
    ADD COLUMN approval_skipped       text CHECK (approval_skipped IN ('EMERGENCY')),
    ADD CONSTRAINT work_orders_awaiting_has_before
        CHECK ((status = 'AWAITING_APPROVAL') = (status_before_approval IS NOT NULL));

CREATE TABLE work_order_costs (
    id             uuid PRIMARY KEY,
    work_order_id  uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
    kind           text NOT NULL CHECK (kind IN ('LABOUR', 'PARTS', 'VENDOR_INVOICE', 'OTHER')),
    description    text NOT NULL CHECK (char_length(description) BETWEEN 1 AND 500),
    amount         numeric(14, 2) NOT NULL CHECK (amount >= 0),
    currency       text NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    bill_to        text NOT NULL CHECK (bill_to IN ('OWNER', 'COMPANY')),
    estimate       boolean NOT NULL,
    created_by     text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_order_costs_order ON work_order_costs (work_order_id, created_at, id);

-- Every approval step: a request sent by link (`channel` LINK, decided on the owner's page) or a
-- decision a manager recorded (`channel` PHONE). The link's token is the row id signed with a key
-- derived from DATA_ENCRYPTION_KEY: nothing that opens the page is stored.
CREATE TABLE work_order_approvals (
    id              uuid PRIMARY KEY,
    work_order_id   uuid NOT NULL REFERENCES work_orders (id) ON DELETE CASCADE,
    channel         text NOT NULL CHECK (channel IN ('LINK', 'PHONE')),
    -- The owner-billed estimate it asked about, per currency: {"USD": "620.00"}.
    estimate        jsonb NOT NULL,
    requested_by    text NOT NULL,
    requested_at    timestamptz NOT NULL DEFAULT now(),
    -- LINK: where the page is (PUBLIC_BASE_URL or the request's address), until when, to whom.
    base_url        text,
    expires_at      timestamptz,
    email_to        text,
    email_sent_at   timestamptz,
    -- A later request, or a decision by another channel, closes an unused link.
    superseded_at   timestamptz,
    decision        text CHECK (decision IN ('APPROVED', 'DECLINED')),
    decided_at      timestamptz,
    note            text CHECK (char_length(note) <= 2000),
    -- LINK: the address the owner's answer came from; PHONE: the manager who recorded it.
    decided_from    text,
    decided_by      text,
    CHECK ((decision IS NULL) = (decided_at IS NULL)),
    CHECK (channel = 'PHONE' OR (base_url IS NOT NULL AND expires_at IS NOT NULL))
);
CREATE INDEX work_order_approvals_order ON work_order_approvals (work_order_id, requested_at, id);
