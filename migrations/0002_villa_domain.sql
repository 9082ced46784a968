-- The villa domain shared by the onboarding (/api) and management (/management) surfaces, and
-- referenced by maintenance (villaId), inventory (propertyId) and reporting (PMS listings).
-- Closed sets are CHECK constraints so that no writer, whatever its surface, stores a value the
-- others cannot read. Secrets (OTA passwords, bank account numbers, IBANs) are stored only as
-- AES-256-GCM ciphertext (domain::crypto) with, where the API shows a masked value, its last four
-- characters.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE owners (
    id                        uuid PRIMARY KEY,
    owner_type                text NOT NULL CHECK (owner_type IN ('INDIVIDUAL', 'COMPANY')),
    first_name                text,
    last_name                 text,
    email                     text,
    phone                     text,
    alternative_phone         text,
    nationality               text,
    passport_number           text,
    tax_id                    text,
    company_name              text,
    registration_number       text,
    contact_person            text,
    company_tax_id            text,
    address                   text,
    city                      text,
    country                   text,
    postal_code               text,
    preferred_language        text,
    communication_preference  text,
    notes                     text,
    created_at                timestamptz NOT NULL DEFAULT now(),
    updated_at                timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX owners_created ON owners (created_at DESC, id);

CREATE TABLE villas (
    id                uuid PRIMARY KEY,
    villa_code        text NOT NULL UNIQUE CHECK (char_length(villa_code) BETWEEN 1 AND 50),
    villa_name        text NOT NULL CHECK (char_length(villa_name) BETWEEN 1 AND 255),
    address           text CHECK (char_length(address) <= 500),
    city              text CHECK (char_length(city) <= 100),
    country           text CHECK (char_length(country) <= 100),
    postal_code       text,
    latitude          numeric(9, 6),
    longitude         numeric(9, 6),
    bedrooms          integer CHECK (bedrooms BETWEEN 1 AND 50),
    bathrooms         integer CHECK (bathrooms BETWEEN 1 AND 50),
    max_guests        integer CHECK (max_guests BETWEEN 1 AND 100),
    property_type     text CHECK (property_type IN ('VILLA', 'APARTMENT', 'HOUSE', 'CONDO', 'RESORT')),
    villa_style       text CHECK (villa_style IN ('MODERN', 'TRADITIONAL', 'BALINESE', 'MEDITERRANEAN',
                                                  'TROPICAL', 'COLONIAL', 'CONTEMPORARY', 'MINIMALIST', 'RUSTIC')),
    description       text,
    land_area_sqm     numeric(12, 2),
    living_area_sqm   numeric(12, 2),
    year_built        integer,
    check_in_time     text,
    check_out_time    text,
    -- Lifecycle of the record; the management surface shows ACTIVE when is_active.
    status            text NOT NULL DEFAULT 'DRAFT'
                      CHECK (status IN ('DRAFT', 'IN_REVIEW', 'APPROVED', 'REJECTED', 'INACTIVE', 'ARCHIVED')),
    is_active         boolean NOT NULL DEFAULT false,
    owner_id          uuid REFERENCES owners (id) ON DELETE SET NULL,
    -- The villa's folder in the document store (Villas/<code>_<id prefix>), fixed the first time
    -- something is stored for it so that a later change of code never moves its files.
    storage_folder    text,
    -- Empty until the folder-tree job has created that folder's tree in the document store.
    storage_base_path text,
    -- Bumped on every write; the ETag of villa and progress responses.
    version           integer NOT NULL DEFAULT 1,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX villas_owner ON villas (owner_id);
CREATE INDEX villas_status ON villas (status, is_active);
CREATE INDEX villas_created ON villas (created_at DESC, id);
-- Substring search over name, code, city and country (management list `search`).
CREATE INDEX villas_search_trgm ON villas USING gin (
    (lower(villa_name || ' ' || villa_code || ' ' || coalesce(city, '') || ' ' || coalesce(country, ''))) gin_trgm_ops
);

CREATE TABLE contractual_details (
    villa_id               uuid PRIMARY KEY REFERENCES villas (id) ON DELETE CASCADE,
    contract_type          text CHECK (contract_type IN ('EXCLUSIVE', 'NON_EXCLUSIVE', 'REVENUE_SHARE', 'FIXED_RENT')),
    commission_rate        numeric(5, 2) CHECK (commission_rate BETWEEN 0 AND 100),
    management_fee         numeric(12, 2),
    fee_currency           char(3),
    contract_start_date    date,
    contract_end_date      date,
    payment_terms          text,
    payout_day             integer CHECK (payout_day BETWEEN 1 AND 31),
    cancellation_policy    text,
    minimum_stay_nights    integer CHECK (minimum_stay_nights >= 0),
    insurance_provider     text,
    insurance_policy_number text,
    insurance_expiry_date  date,
    special_terms          text,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE bank_details (
    villa_id                 uuid PRIMARY KEY REFERENCES villas (id) ON DELETE CASCADE,
    account_holder_name      text,
    bank_name                text,
    bank_address             text,
    bank_country             text,
    swift_code               text,
    currency                 char(3),
    account_number_encrypted bytea,
    account_number_last4     text,
    iban_encrypted           bytea,
    iban_last4               text,
    branch_code              text,
    notes                    text,
    created_at               timestamptz NOT NULL DEFAULT now(),
    updated_at               timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE ota_credentials (
    id                  uuid PRIMARY KEY,
    villa_id            uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    platform            text NOT NULL CHECK (platform IN ('AIRBNB', 'BOOKING_COM', 'EXPEDIA', 'VRBO', 'AGODA',
                                                           'TRIP_COM', 'GOOGLE', 'DIRECT', 'OTHER')),
    property_id         text,
    username            text,
    password_encrypted  bytea,
    listing_url         text,
    is_active           boolean NOT NULL DEFAULT true,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ota_credentials_villa ON ota_credentials (villa_id, platform);

CREATE TABLE staff (
    id            uuid PRIMARY KEY,
    first_name    text NOT NULL,
    last_name     text,
    email         text,
    phone         text,
    default_role  text NOT NULL CHECK (default_role IN ('HOUSEKEEPER', 'GARDENER', 'POOL_TECHNICIAN',
                      'MAINTENANCE_TECHNICIAN', 'VILLA_MANAGER', 'CHEF', 'SECURITY', 'DRIVER')),
    nationality   text,
    is_active     boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX staff_created ON staff (created_at DESC, id);

CREATE TABLE villa_staff (
    villa_id    uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    staff_id    uuid NOT NULL REFERENCES staff (id) ON DELETE CASCADE,
    role        text NOT NULL CHECK (role IN ('HOUSEKEEPER', 'GARDENER', 'POOL_TECHNICIAN',
                    'MAINTENANCE_TECHNICIAN', 'VILLA_MANAGER', 'CHEF', 'SECURITY', 'DRIVER')),
    is_primary  boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (villa_id, staff_id)
);
-- At most one primary per role and villa.
CREATE UNIQUE INDEX villa_staff_one_primary ON villa_staff (villa_id, role) WHERE is_primary;
CREATE INDEX villa_staff_staff ON villa_staff (staff_id);

CREATE TABLE documents (
    id               uuid PRIMARY KEY,
    villa_id         uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    document_type    text NOT NULL CHECK (document_type IN ('PROPERTY_CONTRACT', 'INSURANCE_CERTIFICATE',
                         'PROPERTY_TITLE', 'TAX_DOCUMENTS', 'UTILITY_BILLS', 'LICENSES_PERMITS', 'INVENTORY_LIST',
                         'EMERGENCY_CONTACTS', 'HOUSE_RULES', 'STAFF_CONTRACTS', 'MAINTENANCE_RECORDS', 'OTHER')),
    title            text,
    file_name        text NOT NULL,
    mime_type        text NOT NULL,
    file_size        bigint NOT NULL CHECK (file_size >= 0),
    sha256           text,
    -- Final at upload time: Villas/<villa folder>/Documents/<type folder>/<file name>.
    storage_path     text NOT NULL,
    -- Filled in by the upload job once the document store holds the bytes.
    storage_file_id  text,
    storage_url      text,
    -- The uploaded bytes, kept until the document store has them (workers may run elsewhere).
    pending_content  bytea,
    description      text,
    expiry_date      date,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_villa ON documents (villa_id, created_at DESC);

CREATE TABLE photos (
    id                 uuid PRIMARY KEY,
    villa_id           uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    category           text NOT NULL CHECK (category IN ('LOGO', 'FLOOR_PLAN', 'EXTERIOR_VIEWS',
                           'INTERIOR_LIVING_SPACES', 'BEDROOMS', 'BATHROOMS', 'KITCHEN', 'DINING_AREAS',
                           'POOL_OUTDOOR_AREAS', 'GARDEN_LANDSCAPING', 'AMENITIES_FACILITIES',
                           'VIEWS_SURROUNDINGS', 'STAFF_AREAS', 'UTILITY_AREAS', 'VIDEOS', 'DRONE_SHOTS',
                           'ENTERTAINMENT')),
    subfolder          text,
    file_name          text NOT NULL,
    mime_type          text NOT NULL,
    file_size          bigint NOT NULL CHECK (file_size >= 0),
    width              integer,
    height             integer,
    caption            text,
    alt_text           text,
    is_main            boolean NOT NULL DEFAULT false,
    is_cover           boolean NOT NULL DEFAULT false,
    sort_order         integer NOT NULL DEFAULT 0,
    storage_path       text NOT NULL,
    storage_file_id    text,
    storage_url        text,
    pending_content    bytea,
    thumbnail_content  bytea,
    thumbnail_mime     text,
    created_at         timestamptz NOT NULL DEFAULT now(),
    updated_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX photos_villa ON photos (villa_id, sort_order, created_at);
-- At most one cover photo per villa.
CREATE UNIQUE INDEX photos_one_cover ON photos (villa_id) WHERE is_cover;

CREATE TABLE facilities (
    id            uuid PRIMARY KEY,
    villa_id      uuid NOT NULL REFERENCES villas (id) ON DELETE CASCADE,
    category      text NOT NULL,
    subcategory   text,
    item_name     text NOT NULL,
    is_available  boolean NOT NULL DEFAULT true,
    quantity      integer NOT NULL DEFAULT 1 CHECK (quantity >= 0),
    condition     text CHECK (condition IN ('NEW', 'EXCELLENT', 'GOOD', 'FAIR', 'POOR', 'DAMAGED')),
    notes         text,
    photo_data    bytea,
    photo_mime    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX facilities_villa ON facilities (villa_id, category, item_name);

-- One onboarding record per villa: the wizard's /api/onboarding/... and management's
-- /management/villas/:id/onboarding are two views of it.
CREATE TABLE onboarding_progress (
    villa_id                 uuid PRIMARY KEY REFERENCES villas (id) ON DELETE CASCADE,
    status                   text NOT NULL DEFAULT 'IN_PROGRESS'
                             CHECK (status IN ('NOT_STARTED', 'IN_PROGRESS', 'COMPLETED')),
    agreed_to_terms          boolean NOT NULL DEFAULT false,
    data_accuracy_confirmed  boolean NOT NULL DEFAULT false,
    review_notes             text,
    submission_notes         text,
    -- Optional fields left empty when the onboarding was completed (dashboard mostSkippedFields).
    skipped_fields           text[] NOT NULL DEFAULT '{}',
    started_at               timestamptz NOT NULL DEFAULT now(),
    completed_at             timestamptz,
    completed_by             text,
    version                  integer NOT NULL DEFAULT 1,
    updated_at               timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX onboarding_progress_status ON onboarding_progress (status);

CREATE TABLE onboarding_steps (
    villa_id    uuid NOT NULL REFERENCES onboarding_progress (villa_id) ON DELETE CASCADE,
    step        text NOT NULL CHECK (step IN ('BASIC_INFO', 'OWNER_DETAILS', 'CONTRACT_DETAILS', 'BANK_DETAILS',
                    'OTA_CREDENTIALS', 'DOCUMENTS', 'STAFF_CONFIGURATION', 'FACILITIES', 'PHOTOS', 'REVIEW')),
    status      text NOT NULL DEFAULT 'PENDING'
                CHECK (status IN ('PENDING', 'IN_PROGRESS', 'COMPLETED', 'SKIPPED')),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    updated_by  text,
    PRIMARY KEY (villa_id, step)
);
