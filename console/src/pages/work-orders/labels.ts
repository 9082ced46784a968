// Words for the API's closed sets (work-order status, priority, category,
// source), shared by the work-order screens and the housekeeping board. The
// API answers these upper-case; the console shows them as words.
import type { components } from "../../api/schema";

type Schemas = components["schemas"];
export type WorkOrderStatus = Schemas["WorkOrderStatus"];
export type WorkOrderSource = Schemas["WorkOrderSource"];
export type Priority = Schemas["Priority"];
export type WorkOrderCategory = NonNullable<
  NonNullable<import("../../api/schema").operations["maintenance_work_orders_list"]["parameters"]["query"]>["category"]
>;

export const STATUS_LABELS: Record<WorkOrderStatus, string> = {
  OPEN: "Open",
  ASSIGNED: "Assigned",
  IN_PROGRESS: "In progress",
  ON_HOLD: "On hold",
  AWAITING_APPROVAL: "Awaiting owner approval",
  COMPLETED: "Completed",
  CANCELLED: "Cancelled",
};

export const SOURCE_LABELS: Record<WorkOrderSource, string> = {
  MANUAL: "Manual",
  PLANNED: "Planned maintenance",
  TURNOVER: "Turnover",
  INSPECTION: "Inspection follow-up",
};

export const PRIORITY_LABELS: Record<Priority, string> = {
  LOW: "Low",
  MEDIUM: "Medium",
  HIGH: "High",
  URGENT: "Urgent",
};

export const CATEGORY_LABELS: Record<WorkOrderCategory, string> = {
  HVAC: "HVAC",
  ELECTRICAL: "Electrical",
  PLUMBING: "Plumbing",
  WATER: "Water",
  POOL: "Pool",
  GARDEN: "Garden",
  APPLIANCE: "Appliance",
  STRUCTURAL: "Structural",
  PEST_CONTROL: "Pest control",
  CLEANING: "Cleaning",
  SECURITY: "Security",
  IT_NETWORK: "IT and network",
  GENERAL: "General",
  OTHER: "Other",
  INSPECTION: "Inspection",
};

/** A label for a value the console may not know yet (a newer API): the value itself. */
export function labelOf<K extends string>(labels: Record<K, string>, value: string): string {
  return (labels as Record<string, string>)[value] ?? value;
}

/** Whether a work order is finished with (no more work, no assignment). */
export function isClosed(status: string): boolean {
  return status === "COMPLETED" || status === "CANCELLED";
}
