//! Inventory (spec/operations-apis.md, "Inventory"): stock items of a property (a villa of
//! `/management/villas`) kept at a location, whose quantity changes only through the movements of
//! the ledger; transfers that stay in transit until the destination receives them; category and
//! location trees; stock alerts raised by the alerts jobs; stock, movement and valuation reports.

pub mod alerts;
pub mod categories;
pub mod forecast;
pub mod items;
pub mod locations;
pub mod movements;
pub mod properties;
pub mod reports;
pub mod transfers;

pub const CONDITIONS: &[&str] = crate::onboarding::facilities::CONDITIONS;

pub const UNITS: &[&str] = &[
    "EACH", "PAIR", "SET", "BOX", "PACK", "ROLL", "BOTTLE", "LITER", "KG", "METER",
];

pub const LOCATION_TYPES: &[&str] = &[
    "BUILDING",
    "FLOOR",
    "ROOM",
    "STORAGE",
    "CUPBOARD",
    "KITCHEN",
    "BATHROOM",
    "LAUNDRY",
    "OUTDOOR",
    "POOL_HOUSE",
    "WAREHOUSE",
    "VEHICLE",
    "OTHER",
];

/// Every movement type of the ledger.
pub const MOVEMENT_TYPES: &[&str] = &[
    "INITIAL",
    "PURCHASE",
    "USE",
    "DAMAGE",
    "LOSS",
    "TRANSFER_IN",
    "TRANSFER_OUT",
    "ADJUSTMENT",
    "RETURN",
];

/// The movement types a client posts (`INITIAL` and the transfer types are the platform's).
pub const POSTED_MOVEMENT_TYPES: &[&str] =
    &["PURCHASE", "RETURN", "USE", "DAMAGE", "LOSS", "ADJUSTMENT"];

pub const REFERENCE_TYPES: &[&str] = &[
    "WORK_ORDER",
    "TRANSFER",
    "PURCHASE_ORDER",
    "RESERVATION",
    "STOCKTAKE",
    "OTHER",
];

pub const TRANSFER_STATUSES: &[&str] = &[
    "IN_TRANSIT",
    "RECEIVED",
    "RECEIVED_WITH_DISCREPANCY",
    "CANCELLED",
];

pub const ALERT_TYPES: &[&str] = &["LOW_STOCK", "CONDITION", "EXPIRY", "FORECAST_SHORTAGE"];
pub const ALERT_STATUSES: &[&str] = &["ACTIVE", "ACKNOWLEDGED", "RESOLVED"];
/// What the alert list's `status` filter takes: a status, or `OPEN` (ACTIVE or ACKNOWLEDGED).
pub const ALERT_STATUS_FILTERS: &[&str] = &["ACTIVE", "ACKNOWLEDGED", "RESOLVED", "OPEN"];
/// The alert list's orders: `NEWEST` first (the default) or by `SEVERITY` (CRITICAL first, then
/// the newest within a severity).
pub const ALERT_SORTS: &[&str] = &["NEWEST", "SEVERITY"];
pub const ALERT_SEVERITIES: &[&str] = &["WARNING", "CRITICAL"];
/// What a person did about an alert; the platform's own resolution is `AUTO_RESOLVED`.
pub const RESOLUTION_ACTIONS: &[&str] = &[
    "RESTOCKED",
    "REORDERED",
    "ADJUSTED",
    "REPLACED",
    "DISPOSED",
    "DISMISSED",
    "OTHER",
];

/// The OpenAPI description of the JSON the inventory queries build (documentation only; the
/// API's tests validate every answer against it).
pub mod views {
    #![allow(dead_code)]
    use chrono::{DateTime, NaiveDate, Utc};
    use utoipa::ToSchema;
    use uuid::Uuid;

    #[derive(serde::Serialize, ToSchema)]
    pub struct NamedRef {
        id: Uuid,
        name: String,
    }

    /// A stock item in a list.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Item {
        id: Uuid,
        name: String,
        sku: String,
        /// A category code (LINENS, TOWELS, ... or one added under them).
        category: String,
        property_id: Uuid,
        location_id: Uuid,
        property: NamedRef,
        location: NamedRef,
        /// Up to 3 decimal places; never negative.
        quantity: f64,
        /// EACH, PAIR, SET, BOX, PACK, ROLL, BOTTLE, LITER, KG, METER.
        unit: String,
        min_stock: f64,
        max_stock: Option<f64>,
        /// The item's own expected use per stay (on its checkout day), for the supplies
        /// forecast; null when none.
        use_per_stay: Option<f64>,
        /// The item's own expected use per occupied night; null when none.
        use_per_night: Option<f64>,
        /// NEW, EXCELLENT, GOOD, FAIR, POOR, DAMAGED.
        condition: Option<String>,
        /// The weighted average cost of the stock held, up to 4 decimal places.
        unit_cost: Option<f64>,
        /// ISO 4217.
        currency: String,
        expiry_date: Option<NaiveDate>,
        description: Option<String>,
        /// At or below a minimum greater than 0.
        low_stock: bool,
        /// quantity × unitCost, in `currency` (null without a unit cost).
        value: Option<f64>,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    }

    /// A stock item with its last 20 movements.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ItemDetail {
        #[serde(flatten)]
        item: Item,
        /// The location's names from the property down.
        location_path: String,
        /// Newest first.
        movements: Vec<Movement>,
        /// Open alerts of the item.
        open_alerts: i64,
    }

    /// One entry of the ledger.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Movement {
        id: Uuid,
        item_id: Uuid,
        /// INITIAL, PURCHASE, USE, DAMAGE, LOSS, TRANSFER_IN, TRANSFER_OUT, ADJUSTMENT, RETURN.
        #[schema(rename = "type")]
        kind: String,
        /// As posted: positive for every type but ADJUSTMENT, which is signed.
        quantity: f64,
        /// The signed change of the item's quantity.
        change: f64,
        /// The item's quantity after this movement.
        balance_after: f64,
        unit_cost: Option<f64>,
        notes: Option<String>,
        reference_type: Option<String>,
        reference_id: Option<String>,
        /// The transfer that moved the stock (TRANSFER_IN and TRANSFER_OUT).
        transfer_id: Option<Uuid>,
        /// The work order whose turnover consumables it drew (USE movements written when a
        /// generated work order is completed).
        work_order_id: Option<Uuid>,
        /// The token subject of who recorded it.
        created_by: String,
        created_at: DateTime<Utc>,
    }

    /// A movement in a list: with its item and property.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct MovementItem {
        #[serde(flatten)]
        movement: Movement,
        item: ItemRef,
        property_id: Uuid,
        property: NamedRef,
    }

    #[derive(serde::Serialize, ToSchema)]
    pub struct ItemRef {
        id: Uuid,
        name: String,
        sku: String,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct LocationRef {
        id: Uuid,
        name: String,
        property_id: Uuid,
        path: String,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct TransferLine {
        item_id: Uuid,
        name: String,
        sku: String,
        unit: String,
        sent: f64,
        /// Null until received.
        received: Option<f64>,
        /// sent − received once received.
        discrepancy: Option<f64>,
        /// The stock item at the destination the received quantity went into.
        destination_item_id: Option<Uuid>,
        notes: Option<String>,
    }

    /// A transfer between two locations.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Transfer {
        id: Uuid,
        /// IN_TRANSIT, RECEIVED, RECEIVED_WITH_DISCREPANCY, CANCELLED.
        status: String,
        source_location_id: Uuid,
        destination_location_id: Uuid,
        source_location: LocationRef,
        destination_location: LocationRef,
        items: Vec<TransferLine>,
        notes: Option<String>,
        created_by: String,
        created_at: DateTime<Utc>,
        received_by: Option<String>,
        received_at: Option<DateTime<Utc>>,
        cancelled_by: Option<String>,
        cancelled_at: Option<DateTime<Utc>>,
    }

    /// A location of a property.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Location {
        id: Uuid,
        name: String,
        /// BUILDING, FLOOR, ROOM, STORAGE, CUPBOARD, KITCHEN, BATHROOM, LAUNDRY, OUTDOOR,
        /// POOL_HOUSE, WAREHOUSE, VEHICLE, OTHER.
        #[schema(rename = "type")]
        kind: String,
        property_id: Uuid,
        property: NamedRef,
        parent_id: Option<Uuid>,
        description: Option<String>,
        /// Names from the property down: `Villa Sunset / Main house / Linen cupboard`.
        path: String,
        /// Items kept here (not archived).
        item_count: i64,
        created_at: DateTime<Utc>,
    }

    /// A category of stock items.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Category {
        id: Uuid,
        /// Upper-case letters, digits and `_`; what items name.
        code: String,
        name: String,
        parent_id: Option<Uuid>,
        description: Option<String>,
        /// Names from the top: `Linens / Bed sheets`.
        path: String,
        /// Shipped with the platform.
        builtin: bool,
        /// Items of this category (not of its descendants), not archived.
        item_count: i64,
        created_at: DateTime<Utc>,
    }

    /// A villa seen as an inventory property.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Property {
        id: Uuid,
        name: String,
        code: String,
        location_count: i64,
        item_count: i64,
    }

    /// A stock alert.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Alert {
        id: Uuid,
        /// LOW_STOCK, CONDITION, EXPIRY, FORECAST_SHORTAGE.
        #[schema(rename = "type")]
        kind: String,
        /// ACTIVE, ACKNOWLEDGED, RESOLVED.
        status: String,
        /// CRITICAL for a quantity of 0, a past expiry or a forecast run-out within
        /// FORECAST_CRITICAL_DAYS, otherwise WARNING. A resolved alert keeps the severity it was
        /// resolved at.
        severity: String,
        item_id: Uuid,
        property_id: Uuid,
        location_id: Uuid,
        item: ItemRef,
        property: NamedRef,
        location: NamedRef,
        message: String,
        current_quantity: f64,
        /// The minimum (LOW_STOCK, FORECAST_SHORTAGE); null otherwise.
        threshold: Option<f64>,
        /// FORECAST_SHORTAGE: the balance projected at the end of FORECAST_ALERT_DAYS, as
        /// `/inventory/reports/forecast?days=FORECAST_ALERT_DAYS` shows it; null otherwise.
        projected_balance: Option<f64>,
        /// FORECAST_SHORTAGE: the day the stock runs out at the expected use; null when it lasts
        /// the window, and for other types.
        run_out_date: Option<NaiveDate>,
        expiry_date: Option<NaiveDate>,
        condition: Option<String>,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
        acknowledged_by: Option<String>,
        acknowledged_at: Option<DateTime<Utc>>,
        resolved_by: Option<String>,
        resolved_at: Option<DateTime<Utc>>,
        /// RESTOCKED, REORDERED, ADJUSTED, REPLACED, DISPOSED, DISMISSED, OTHER, or
        /// AUTO_RESOLVED when the platform saw the cause go away.
        resolution_action: Option<String>,
        resolution_notes: Option<String>,
    }
}
