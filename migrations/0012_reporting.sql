-- Reporting (/reporting): what the property-management system (PMS, Hostaway's API v1) holds,
-- copied by the sync job (jobs::pms), and the sync runs a client polls. Each listing and
-- reservation is kept with the PMS record it came from (`raw`); upserts are by PMS id and write
-- nothing when the record is unchanged (domain::reporting::listings, ::reservations).

CREATE TABLE pms_listings (
    id                    uuid PRIMARY KEY,
    pms_id                bigint NOT NULL UNIQUE,
    name                  text NOT NULL,
    status                text NOT NULL CHECK (status IN ('ACTIVE', 'INACTIVE')),
    bedrooms              integer,
    location              text,
    currency              text,
    -- Hostaway's internalListingName: a listing whose internal name is a villa's code (in any
    -- letter case) is linked to that villa by the sync.
    internal_name         text,
    -- The link is not history: deleting the villa just unlinks the listing.
    villa_id              uuid REFERENCES villas (id) ON DELETE SET NULL,
    -- Set by PATCH /reporting/listings/:id (a villa or null): the sync no longer links it.
    villa_linked_by_hand  boolean NOT NULL DEFAULT false,
    raw                   jsonb NOT NULL,
    -- When a sync last stored a change of the listing (an unchanged one is not written).
    synced_at             timestamptz NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now()
);
-- The list's order (by name).
CREATE INDEX pms_listings_name ON pms_listings (lower(name), id);
CREATE INDEX pms_listings_villa ON pms_listings (villa_id);
-- The sync's link of listings to villas by code, in any letter case.
CREATE INDEX villas_code_lower ON villas (lower(villa_code));

CREATE TABLE pms_reservations (
    id                    uuid PRIMARY KEY,
    pms_id                bigint NOT NULL UNIQUE,
    -- The listing's PMS id (pms_listings.pms_id), not a foreign key: a reservation may arrive
    -- before its listing, or name one the PMS no longer lists.
    listing_pms_id        bigint,
    guest_name            text,
    check_in              date NOT NULL,
    check_out             date NOT NULL,
    nights                integer NOT NULL,
    channel               text NOT NULL
                          CHECK (channel IN ('AIRBNB', 'BOOKING_COM', 'VRBO', 'EXPEDIA', 'DIRECT', 'GOOGLE', 'OTHER')),
    channel_id            bigint,
    channel_name          text,
    total_amount          numeric(14, 2) NOT NULL,
    net_amount            numeric(14, 2) NOT NULL,
    tax_amount            numeric(14, 2) NOT NULL DEFAULT 0,
    channel_commission    numeric(14, 2) NOT NULL DEFAULT 0,
    hostaway_commission   numeric(14, 2) NOT NULL DEFAULT 0,
    currency              text,
    status                text NOT NULL
                          CHECK (status IN ('CONFIRMED', 'PENDING', 'CANCELLED', 'OWNER_STAY', 'INQUIRY',
                                            'DECLINED', 'EXPIRED', 'UNKNOWN')),
    -- The PMS's own status (`new`, `modified`, `inquiryPreapproved`, ...).
    pms_status            text,
    raw                   json NOT NULL,   -- text as the PMS sent it (json: checked, not parsed into jsonb; the sync compares it as text)
    synced_at             timestamptz NOT NULL,
    created_at            timestamptz NOT NULL DEFAULT now()
);
-- The list's order (newest check-in first).
CREATE INDEX pms_reservations_check_in ON pms_reservations (check_in DESC, id DESC);
-- A listing's reservations (the listing filter, the listings' metrics).
CREATE INDEX pms_reservations_listing ON pms_reservations (listing_pms_id, check_in);
CREATE INDEX pms_reservations_status ON pms_reservations (status);
CREATE INDEX pms_reservations_channel ON pms_reservations (channel);

CREATE TABLE pms_sync_runs (
    id              uuid PRIMARY KEY,
    kind            text NOT NULL CHECK (kind IN ('full', 'incremental')),
    entities        text[] NOT NULL
                    CHECK (cardinality(entities) > 0 AND entities <@ ARRAY['listings', 'reservations']),
    status          text NOT NULL CHECK (status IN ('STARTED', 'RUNNING', 'COMPLETED', 'FAILED')),
    -- The job running the sync. Not a foreign key: the scheduler purges finished jobs, and a run
    -- still STARTED or RUNNING whose job is finished or gone must be seen as such (it failed),
    -- which a key set to NULL on delete would hide.
    job_id          uuid,
    -- The token subject that triggered it, or 'scheduler'.
    triggered_by    text,
    started_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    -- Per entity: {"listings": {fetched, created, updated, unchanged, pagesDone, pagesTotal}, ...}
    progress        jsonb NOT NULL DEFAULT '{}',
    -- The worker's resume point (private to jobs::pms).
    cursor          jsonb NOT NULL DEFAULT '{}',
    -- Incremental runs: the activity asked for (the PMS is asked from the day before this
    -- instant's UTC date, see jobs::pms).
    activity_since  timestamptz,
    error           text,
    -- The attempt of the sync job that holds the run (`<worker>#<attempt>`), set when it takes
    -- the run. Only that attempt may save a page or finish the run: a worker whose lease lapsed
    -- while another attempt took the run over stops at its next page instead of running beside it.
    owner           text
);
-- One sync at a time: a second run while one is active is a unique violation (the insert of
-- domain::reporting::sync_runs::start meets it with ON CONFLICT DO NOTHING and answers that run).
CREATE UNIQUE INDEX pms_sync_runs_one_active ON pms_sync_runs ((true)) WHERE status IN ('STARTED', 'RUNNING');
CREATE INDEX pms_sync_runs_started ON pms_sync_runs (started_at DESC, id DESC);
-- The last finished run (health).
CREATE INDEX pms_sync_runs_finished ON pms_sync_runs (finished_at DESC) WHERE finished_at IS NOT NULL;

-- The records a run has met, per entity: a record met again (it moved behind the cursor, a later
-- pass, an attempt resuming after another) is stored again but counted once, whichever attempt
-- or worker meets it. Written in the transaction that stores the page; a run's rows are deleted
-- when it finishes. Bookkeeping only, hence UNLOGGED (no WAL on the sync's hot path): a crash of
-- Postgres empties it, and the worst that follows is a resumed run counting some records again
-- (the records themselves are in logged tables, stored once). No foreign key: the rows live only
-- as long as their run is active.
CREATE UNLOGGED TABLE pms_sync_seen (
    run_id  uuid NOT NULL,
    entity  text NOT NULL,
    pms_id  bigint NOT NULL,
    PRIMARY KEY (run_id, entity, pms_id)
);

-- The PMS access token, shared by every worker so that it is fetched once, not per process.
CREATE TABLE pms_tokens (
    -- The PMS base URL, a space, and the client id.
    account      text PRIMARY KEY,
    -- Encrypted with the platform's field cipher (domain::crypto::FieldCipher).
    token        bytea NOT NULL,
    -- Hostaway's tokens are valid about a second after they are issued.
    usable_from  timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- What the last PMS call said of the connection (health), one row.
CREATE TABLE pms_connection (
    id                boolean PRIMARY KEY DEFAULT true CHECK (id),
    state             text NOT NULL CHECK (state IN ('connected', 'disconnected')),
    error             text,
    checked_at        timestamptz NOT NULL,
    -- When an API replica last took the turn to probe the PMS (at most one probe a minute).
    probe_claimed_at  timestamptz NOT NULL DEFAULT '-infinity'
);
