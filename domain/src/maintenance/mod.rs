//! The maintenance surface's records (`/maintenance`): work orders with their explicit status
//! transitions, history and comments; assets and their health; vendors and their ratings. All
//! point at the one villa row and, for technicians, at the one staff row.

pub mod approvals;
pub mod assets;
pub mod board;
pub mod checklists;
pub mod consumables;
pub mod costs;
pub mod emergencies;
pub mod field_notes;
pub mod pmp;
pub mod task_rules;
pub mod timesheets;
pub mod turnovers;
pub mod vendors;
pub mod work_orders;

/// The categories a work order may have: those of assets and vendors ([`CATEGORIES`]), then
/// INSPECTION (what task rules open before a stay).
pub const WORK_ORDER_CATEGORIES: &[&str] = &[
    "HVAC",
    "ELECTRICAL",
    "PLUMBING",
    "WATER",
    "POOL",
    "GARDEN",
    "APPLIANCE",
    "STRUCTURAL",
    "PEST_CONTROL",
    "CLEANING",
    "SECURITY",
    "IT_NETWORK",
    "GENERAL",
    "OTHER",
    "INSPECTION",
];

/// The work-order categories less INSPECTION: what assets, vendors, planned maintenance and
/// emergencies take (their tables refuse INSPECTION).
pub const CATEGORIES: &[&str] = WORK_ORDER_CATEGORIES
    .split_at(WORK_ORDER_CATEGORIES.len() - 1)
    .0;

/// What a task rule's date counts from: a stay's checkout or check-in, or every few nights of it.
pub const TRIGGERS: &[&str] = &["CHECKOUT", "CHECKIN", "MID_STAY"];

/// A checklist item's kind: ticked, or answered with a photo.
pub const CHECKLIST_KINDS: &[&str] = &["CHECK", "PHOTO_REQUIRED"];

/// Where a work order came from: opened by a person, planned maintenance, a task rule (a
/// turnover), a failed checklist item.
pub const SOURCES: &[&str] = &["MANUAL", "PLANNED", "TURNOVER", "INSPECTION"];

pub const PRIORITIES: &[&str] = &["LOW", "MEDIUM", "HIGH", "URGENT"];

/// The platform's one condition set (facilities, stock items, assets).
pub const CONDITIONS: &[&str] = crate::onboarding::facilities::CONDITIONS;

/// `assigneeType`: a staff member of `/management/staff`, or a vendor.
pub const ASSIGNEE_TYPES: &[&str] = &["TECHNICIAN", "VENDOR"];

pub const COMMENT_TYPES: &[&str] = &["PUBLIC", "INTERNAL"];

/// The OpenAPI description of the JSON the maintenance queries build (documentation only; the
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

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum AssigneeType {
        Technician,
        Vendor,
    }

    /// Who a work order is assigned to.
    #[derive(serde::Serialize, ToSchema)]
    pub struct Assignee {
        id: Uuid,
        name: String,
        #[schema(rename = "type")]
        kind: AssigneeType,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum WorkOrderStatus {
        Open,
        Assigned,
        InProgress,
        OnHold,
        /// Its owner-billed estimate is above the approval threshold: it waits for the owner.
        AwaitingApproval,
        Completed,
        Cancelled,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum Priority {
        Low,
        Medium,
        High,
        Urgent,
    }

    /// Where a work order came from: opened by a person (MANUAL), planned maintenance
    /// (PLANNED), a task rule for a stay (TURNOVER), a failed checklist item (INSPECTION).
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum WorkOrderSource {
        Manual,
        Planned,
        Turnover,
        Inspection,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ChecklistItemKind {
        Check,
        /// PASS needs a PHOTO field note of the work order.
        PhotoRequired,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ChecklistResult {
        Pass,
        Fail,
        Na,
    }

    /// One item of a work order's checklist.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ChecklistItem {
        id: Uuid,
        text: String,
        kind: ChecklistItemKind,
        /// Null until answered.
        result: Option<ChecklistResult>,
        notes: Option<String>,
        /// The token subject of who answered it.
        answered_by: Option<String>,
        answered_at: Option<DateTime<Utc>>,
        /// The field note it was answered with (a PHOTO one for a PASS of a PHOTO_REQUIRED item).
        field_note_id: Option<Uuid>,
        /// The work order its FAIL opened (once per item).
        follow_up_work_order_id: Option<Uuid>,
    }

    /// A status an update may move the work order to from its current one.
    #[derive(serde::Serialize, ToSchema)]
    pub struct StatusMove {
        status: WorkOrderStatus,
        /// The member the update must carry for this move (`holdReason` to put it on hold,
        /// `reason` to reopen a completed one); null when none. Cancelling also needs the
        /// `manage` permission in maintenance (`GET /me`).
        requires: Option<String>,
    }

    /// A work order opened by a failed item of this one's checklist.
    #[derive(serde::Serialize, ToSchema)]
    pub struct FollowUp {
        id: Uuid,
        title: String,
        status: WorkOrderStatus,
    }

    /// What completing a turnover drew from the villa's stock.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ConsumableDraw {
        item_sku: String,
        wanted: f64,
        drawn: f64,
        /// What the stock lacked: `wanted - drawn`.
        shortfall: f64,
    }

    /// A work order in a list.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct WorkOrderItem {
        id: Uuid,
        title: String,
        status: WorkOrderStatus,
        priority: Priority,
        /// HVAC, ELECTRICAL, ... (the work-order categories).
        category: String,
        villa_id: Uuid,
        asset_id: Option<Uuid>,
        /// The staff member or vendor it is assigned to (`assignee.id`).
        assignee_id: Option<Uuid>,
        assignee_type: Option<AssigneeType>,
        villa: NamedRef,
        assignee: Option<Assignee>,
        /// For a generated work order, the date of its occurrence.
        due_date: Option<DateTime<Utc>>,
        source: WorkOrderSource,
        /// The PMS stay a turnover is for.
        reservation_id: Option<Uuid>,
        /// The task rule that generated it.
        task_rule_id: Option<Uuid>,
        /// The villa has a check-in on the day of this check-out.
        same_day_turnover: bool,
        /// The stay moved or was cancelled after the work started.
        reservation_changed: bool,
        /// The work order whose failed checklist item opened this one.
        parent_work_order_id: Option<Uuid>,
        created_at: DateTime<Utc>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Comment {
        id: Uuid,
        work_order_id: Uuid,
        content: String,
        /// PUBLIC or INTERNAL.
        #[schema(rename = "type")]
        kind: String,
        /// The token subject of who wrote it.
        author: String,
        created_at: DateTime<Utc>,
    }

    /// One status change.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct StatusChange {
        /// Null for the opening entry.
        from: Option<WorkOrderStatus>,
        to: WorkOrderStatus,
        reason: Option<String>,
        changed_by: String,
        changed_at: DateTime<Utc>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct TimesheetEntry {
        id: Uuid,
        hours: f64,
        activity_type: String,
        date: NaiveDate,
        staff_id: Option<Uuid>,
        logged_by: String,
        notes: Option<String>,
    }

    /// One work order with everything recorded about it.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct WorkOrderDetail {
        /// What the list shows of it.
        #[serde(flatten)]
        item: WorkOrderItem,
        description: Option<String>,
        asset: Option<NamedRef>,
        hold_reason: Option<String>,
        completion_notes: Option<String>,
        completed_at: Option<DateTime<Utc>>,
        /// The planned-maintenance schedule that generated it, and the occurrence it is for.
        schedule_id: Option<Uuid>,
        occurrence_date: Option<NaiveDate>,
        /// The emergency it was opened for.
        emergency_id: Option<Uuid>,
        created_by: String,
        updated_at: DateTime<Utc>,
        comments: Vec<Comment>,
        /// Status changes, oldest first.
        history: Vec<StatusChange>,
        timesheets: Vec<TimesheetEntry>,
        total_hours: f64,
        /// Its checklist in order; empty when it has none.
        checklist: Vec<ChecklistItem>,
        /// The work orders its failed checklist items opened, oldest first.
        follow_ups: Vec<FollowUp>,
        /// What completing it drew from the villa's stock; null until drawn.
        consumables: Option<Vec<ConsumableDraw>>,
        /// The statuses an update may move it to now, with what each needs (ASSIGNED is reached
        /// by assigning it).
        next_statuses: Vec<StatusMove>,
        /// Its cost lines, oldest first.
        costs: Vec<CostLine>,
        /// The lines' sums per currency and `billTo`.
        cost_totals: Vec<CostTotal>,
        /// The threshold that applies: the villa's own, else its owner's; null when none.
        approval_threshold: Option<Money>,
        /// EMERGENCY when its estimate would need the owner's approval but it is an emergency's.
        approval_skipped: Option<ApprovalSkipped>,
        /// While AWAITING_APPROVAL: the status an approval returns it to.
        status_before_approval: Option<WorkOrderStatus>,
        /// Every approval step (links sent, decisions), oldest first.
        approvals: Vec<ApprovalStep>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum CostKind {
        Labour,
        Parts,
        VendorInvoice,
        Other,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum BillTo {
        Owner,
        Company,
    }

    /// A cost line of a work order.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct CostLine {
        id: Uuid,
        work_order_id: Uuid,
        kind: CostKind,
        description: String,
        /// At most 2 decimal places.
        amount: f64,
        /// ISO 4217.
        currency: String,
        bill_to: BillTo,
        /// An estimate (what the owner approves) or an actual cost.
        estimate: bool,
        created_by: String,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    }

    /// The cost lines of one currency and one payer, summed.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct CostTotal {
        currency: String,
        bill_to: BillTo,
        estimated: f64,
        actual: f64,
        /// `estimated + actual`.
        total: f64,
    }

    /// An amount in a currency.
    #[derive(serde::Serialize, ToSchema)]
    pub struct Money {
        amount: f64,
        /// ISO 4217.
        currency: String,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ApprovalSkipped {
        Emergency,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ApprovalChannel {
        /// A signed link the owner answered on the platform's page.
        Link,
        /// A decision the owner gave by phone, recorded by a manager.
        Phone,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ApprovalDecision {
        Approved,
        Declined,
    }

    /// One approval step: a link sent to the owner, or a decision recorded by phone.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct ApprovalStep {
        id: Uuid,
        channel: ApprovalChannel,
        /// The owner-billed estimate asked about (approved, once approved), per currency:
        /// `{"USD": "620.00"}`.
        #[schema(value_type = Object)]
        estimate: serde_json::Value,
        requested_by: String,
        requested_at: DateTime<Utc>,
        /// A link's end of validity.
        expires_at: Option<DateTime<Utc>>,
        /// Who the link was e-mailed to; null when the owner has no address.
        email_to: Option<String>,
        /// When the e-mail went out; null until then (or without SMTP_URL).
        email_sent_at: Option<DateTime<Utc>>,
        /// When a later request or a decision closed the unused link.
        superseded_at: Option<DateTime<Utc>>,
        decision: Option<ApprovalDecision>,
        decided_at: Option<DateTime<Utc>>,
        note: Option<String>,
        /// The address the owner's answer came from (a link).
        decided_from: Option<String>,
        /// The manager who recorded a phone decision; `owner (approval link)` for a link.
        decided_by: Option<String>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum WarrantyStatus {
        Active,
        Expired,
        None,
    }

    /// An asset in a list.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct AssetItem {
        id: Uuid,
        name: String,
        category: String,
        villa_id: Uuid,
        villa: NamedRef,
        brand: Option<String>,
        model: Option<String>,
        serial_number: Option<String>,
        location: Option<String>,
        purchase_date: Option<NaiveDate>,
        warranty_end_date: Option<NaiveDate>,
        /// The latest reading, 0 to 100.
        health_score: Option<i32>,
        condition: Option<String>,
        warranty_status: WarrantyStatus,
        /// Days until the warranty ends; null unless it is active.
        warranty_days_left: Option<i32>,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct HealthReading {
        health_score: i32,
        condition: String,
        notes: Option<String>,
        recorded_by: String,
        recorded_at: DateTime<Utc>,
    }

    /// One asset with its health history and open work orders.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct AssetDetail {
        /// What the list shows of it.
        #[serde(flatten)]
        item: AssetItem,
        /// Every reading, newest first.
        health_history: Vec<HealthReading>,
        /// Its work orders neither COMPLETED nor CANCELLED.
        open_work_orders: i64,
    }

    /// A vendor in a list.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct VendorItem {
        id: Uuid,
        company_name: String,
        contact_name: Option<String>,
        email: String,
        phone: Option<String>,
        categories: Vec<String>,
        notes: Option<String>,
        /// The mean of its ratings' averages, to 2 decimals; null when unrated.
        average_rating: Option<f64>,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    }

    /// Averages per criterion, to 2 decimals; null when unrated.
    #[derive(serde::Serialize, ToSchema)]
    pub struct RatingSummary {
        average: Option<f64>,
        quality: Option<f64>,
        timeliness: Option<f64>,
        communication: Option<f64>,
        value: Option<f64>,
        count: i64,
    }

    /// One vendor with its ratings.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct VendorDetail {
        /// What the list shows of it.
        #[serde(flatten)]
        item: VendorItem,
        rating: RatingSummary,
    }

    /// One rating.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Rating {
        id: Uuid,
        vendor_id: Uuid,
        work_order_id: Uuid,
        quality: i32,
        timeliness: i32,
        communication: i32,
        value: i32,
        /// The mean of the four, to 2 decimals.
        average: f64,
        comments: Option<String>,
        rated_by: String,
        created_at: DateTime<Utc>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum EmergencyStatus {
        Reported,
        Acknowledged,
        Responding,
        Contained,
        Resolved,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum Severity {
        Low,
        Medium,
        High,
        Critical,
    }

    /// An emergency in a list.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct EmergencyItem {
        id: Uuid,
        villa_id: Uuid,
        villa: NamedRef,
        category: String,
        severity: Severity,
        description: String,
        location: Option<String>,
        status: EmergencyStatus,
        /// The URGENT work order opened with it.
        work_order_id: Option<Uuid>,
        reported_by: String,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum EventKind {
        StatusChange,
        Action,
    }

    /// A status change (`from`, `to`, `notes`) or an action (`action`, `performedBy`).
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct TimelineEntry {
        id: Uuid,
        kind: EventKind,
        from: Option<EmergencyStatus>,
        to: Option<EmergencyStatus>,
        notes: Option<String>,
        action: Option<String>,
        /// The staff member who acted.
        performed_by: Option<Uuid>,
        /// The token subject of who recorded it.
        recorded_by: String,
        at: DateTime<Utc>,
    }

    /// One emergency with its timeline.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct EmergencyDetail {
        /// What the list shows of it.
        #[serde(flatten)]
        item: EmergencyItem,
        /// Status changes and actions, in time order.
        timeline: Vec<TimelineEntry>,
    }

    /// A planned-maintenance template.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Template {
        id: Uuid,
        name: String,
        description: Option<String>,
        category: String,
        priority: Priority,
        estimated_hours: Option<f64>,
        /// What the technician checks, in order.
        checklist: Vec<String>,
        default_frequency: String,
        /// Shipped with the platform.
        builtin: bool,
        created_at: DateTime<Utc>,
    }

    /// A schedule of a template on an asset.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Schedule {
        id: Uuid,
        template_id: Uuid,
        template: NamedRef,
        asset_id: Uuid,
        asset: NamedRef,
        villa_id: Uuid,
        frequency: String,
        start_date: NaiveDate,
        /// SCHEDULED_DATE or COMPLETED_DATE.
        basis: String,
        /// The staff member its work orders are assigned to.
        assignee_id: Option<Uuid>,
        /// Work orders generated so far.
        work_orders: i64,
        /// The next occurrence: for SCHEDULED_DATE the first not generated yet (the
        /// generation's cursor; occurrences older than `PM_CATCH_UP_DAYS` are skipped); for
        /// COMPLETED_DATE the open work order's, or the one counted from the last completion.
        next_due_date: Option<NaiveDate>,
        created_by: String,
        created_at: DateTime<Utc>,
    }

    /// A timesheet entry.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct Timesheet {
        id: Uuid,
        /// Null for unplanned work.
        work_order_id: Option<Uuid>,
        villa_id: Uuid,
        staff_id: Option<Uuid>,
        /// The token subject of who logged it.
        logged_by: String,
        hours: f64,
        activity_type: String,
        date: NaiveDate,
        notes: Option<String>,
        created_at: DateTime<Utc>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum FieldNoteType {
        Text,
        Voice,
        Photo,
    }

    /// A field note.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct FieldNote {
        id: Uuid,
        #[schema(rename = "type")]
        kind: FieldNoteType,
        content: Option<String>,
        villa_id: Uuid,
        work_order_id: Option<Uuid>,
        asset_id: Option<Uuid>,
        file_name: Option<String>,
        /// Read from the file's bytes.
        mime_type: Option<String>,
        file_size: Option<i64>,
        /// `Villas/<villa>/Maintenance/Field-Notes/<file>`.
        storage_path: Option<String>,
        /// This API's route serving the file, whether or not it reached the store yet.
        file_url: Option<String>,
        /// PENDING until the documents worker has stored the file, then STORED; null without one.
        storage_status: Option<String>,
        storage_url: Option<String>,
        created_by: String,
        created_at: DateTime<Utc>,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum Trigger {
        Checkout,
        Checkin,
        MidStay,
    }

    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "SCREAMING_SNAKE_CASE")]
    pub enum ChecklistKind {
        Check,
        PhotoRequired,
    }

    /// One item of a task rule's checklist.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct RuleChecklistItem {
        text: String,
        kind: ChecklistKind,
        /// The category of the repair a failed item opens (a work-order category).
        fail_category: String,
    }

    /// What a work order of the rule draws from its villa's stock (the item with this SKU).
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct RuleConsumable {
        item_sku: String,
        /// Drawn once per stay (at most 3 decimals, exact).
        per_stay: f64,
        /// Drawn per night of the stay (at most 3 decimals, exact).
        per_night: f64,
    }

    /// A task rule.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct TaskRule {
        id: Uuid,
        name: String,
        trigger: Trigger,
        /// Days added to the trigger's date, -30 to 30.
        offset_days: i32,
        /// MID_STAY only: one occurrence after every this many nights of a longer stay.
        every_nights: Option<i32>,
        /// The villas it applies to, sorted; empty: every villa linked to a listing.
        villa_ids: Vec<Uuid>,
        /// A work-order category (INSPECTION included).
        category: String,
        priority: Priority,
        /// The work orders' title as stored; null: the rule's name.
        title: Option<String>,
        /// The staff member its work orders are assigned to.
        default_assignee_id: Option<Uuid>,
        include_owner_stays: bool,
        checklist: Vec<RuleChecklistItem>,
        consumables: Vec<RuleConsumable>,
        /// When it was archived (it generates nothing since); null while active.
        archived_at: Option<DateTime<Utc>>,
        /// The token subject of who created it.
        created_by: String,
        created_at: DateTime<Utc>,
        updated_at: DateTime<Utc>,
    }
    /// A stay checking out, on the housekeeping board.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct BoardCheckout {
        reservation_id: Uuid,
        guest_name: Option<String>,
        check_out: NaiveDate,
    }

    /// A stay checking in, on the housekeeping board.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct BoardCheckin {
        reservation_id: Uuid,
        guest_name: Option<String>,
        check_in: NaiveDate,
        nights: i32,
        /// The PMS's `numberOfGuests`; null when it did not send a whole number.
        guests: Option<i32>,
    }

    /// A work order generated from a stay, due that day.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct BoardWorkOrder {
        id: Uuid,
        title: String,
        status: WorkOrderStatus,
        assignee: Option<Assignee>,
        /// The task rule that made it.
        task_rule_id: Option<Uuid>,
    }

    /// One villa on one day of the housekeeping board.
    #[derive(serde::Serialize, ToSchema)]
    #[schema(rename_all = "camelCase")]
    pub struct BoardDay {
        date: NaiveDate,
        villa: NamedRef,
        /// The stays leaving that day, by guest name.
        checkouts: Vec<BoardCheckout>,
        /// The stays arriving that day, by guest name.
        checkins: Vec<BoardCheckin>,
        /// A stay leaves and another arrives that day.
        same_day_turnover: bool,
        /// The villa's work orders generated from stays, due that day and not CANCELLED, by title.
        work_orders: Vec<BoardWorkOrder>,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn categories_are_the_work_order_categories_less_inspection() {
        // CATEGORIES is cut from the end of WORK_ORDER_CATEGORIES: INSPECTION must stay last.
        assert_eq!(super::WORK_ORDER_CATEGORIES.last(), Some(&"INSPECTION"));
        assert!(!super::CATEGORIES.contains(&"INSPECTION"));
        assert_eq!(super::CATEGORIES.len(), 14);
    }
}
