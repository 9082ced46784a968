//! Reporting (spec/operations-apis.md, "Reporting"): what the property-management system (PMS,
//! Hostaway's API v1) holds, copied into Postgres by the sync job (`jobs::pms`), and read by the
//! `/reporting` routes. The job maps each PMS record ([`hostaway`]) and upserts it by PMS id
//! ([`listings`], [`reservations`]): unchanged records are not written, so a second sync of the
//! same data writes no row. A sync is a run ([`sync_runs`]) that a client polls; one runs at a
//! time. The PMS access token is shared by every worker ([`tokens`]), and the health route reads
//! what the last PMS call said of the connection ([`connection`]). The figures (revenue,
//! occupancy, ADR, RevPAR, bookings) are defined and computed once, in [`figures`], for the
//! dashboard, the listings' `metrics` ([`metrics`]) and the exports; an export is a file built
//! by a job from the same statements and kept for a while in the document store ([`exports`]).

pub mod connection;
pub mod exports;
pub mod figures;
pub mod hostaway;
pub mod listings;
pub mod metrics;
pub mod reservations;
pub mod statements;
pub mod sync_runs;
pub mod tokens;
pub mod upserts;

pub use upserts::UpsertCounts;

/// A listing's status: INACTIVE when the PMS archived it, or no longer has it (retired by a full
/// sync: `removed_from_pms`).
pub const LISTING_STATUSES: &[&str] = &["ACTIVE", "INACTIVE"];

/// Our reservation statuses ([`hostaway::status_of`] maps the PMS's to these), and REMOVED: the
/// PMS no longer has it (retired by a full sync), which counts for nothing in any figure.
pub const RESERVATION_STATUSES: &[&str] = &[
    "CONFIRMED",
    "PENDING",
    "CANCELLED",
    "OWNER_STAY",
    "INQUIRY",
    "DECLINED",
    "EXPIRED",
    "UNKNOWN",
    "REMOVED",
];

/// Booking channels ([`hostaway::channel_of`] maps the PMS's channel ids to these).
pub const CHANNELS: &[&str] = &[
    "AIRBNB",
    "BOOKING_COM",
    "VRBO",
    "EXPEDIA",
    "DIRECT",
    "GOOGLE",
    "OTHER",
];

/// A sync's `type`: `full` reads everything; `incremental` reads the listings and only the
/// reservations with activity since the last completed sync (less a safety margin).
pub const SYNC_TYPES: &[&str] = &["full", "incremental"];

/// What a sync may read.
pub const SYNC_ENTITIES: &[&str] = &["listings", "reservations"];

/// A sync run's states: STARTED → RUNNING → COMPLETED or FAILED.
pub const SYNC_STATUSES: &[&str] = &["STARTED", "RUNNING", "COMPLETED", "FAILED"];
