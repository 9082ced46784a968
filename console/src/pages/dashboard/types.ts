import type { components } from "../../api/schema";

export type Metrics = components["schemas"]["DashboardMetrics"];
export type ChartData = components["schemas"]["DashboardChart"];
export type OccupancyData = components["schemas"]["DashboardOccupancy"];
export type Stay = components["schemas"]["ReportingReservation"];
export type Listing = components["schemas"]["Page_ReportingListing"]["data"][number];
