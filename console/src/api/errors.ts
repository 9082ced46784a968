// The API's error message, whatever the surface's error shape
// (docs/api/README.md, "Errors"): the console shows the API's own words.

interface FieldProblem {
  field?: string;
  message?: string;
}

function fieldList(problems: unknown): string[] {
  if (!Array.isArray(problems)) return [];
  return (problems as FieldProblem[])
    .filter((p) => p && typeof p.message === "string")
    .map((p) => (p.field ? `${p.field}: ${p.message}` : String(p.message)));
}

/**
 * A readable message from an error body of any surface, with the field
 * problems after it; `status` words it when the body says nothing.
 */
export function apiMessage(body: unknown, status?: number): string {
  if (body && typeof body === "object") {
    const b = body as Record<string, unknown>;
    // management, maintenance, inventory, reporting, platform: {error: {code, message, ...}}
    const error = b.error as Record<string, unknown> | undefined;
    if (error && typeof error === "object" && typeof error.message === "string") {
      return [error.message, ...fieldList(error.details)].join(" — ");
    }
    // onboarding: {statusCode, statusMessage, data: {code, errors}}
    if (typeof b.statusMessage === "string") {
      const data = b.data as Record<string, unknown> | undefined;
      return [b.statusMessage, ...fieldList(data?.errors)].join(" — ");
    }
  }
  if (typeof body === "string" && body.trim()) return body.trim();
  if (status === 403) return "Your role does not allow this.";
  if (status) return `The request failed (HTTP ${status}).`;
  return "The request failed: the platform could not be reached.";
}

/** An error thrown by `unwrap`: the API's message, with its status. */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/**
 * The data of an openapi-fetch result, or an ApiError carrying the API's
 * message: pages handle one kind of failure.
 */
export function unwrap<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.error !== undefined || !result.response.ok) {
    throw new ApiError(apiMessage(result.error, result.response.status), result.response.status);
  }
  return result.data as T;
}

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof DOMException && error.name === "AbortError") return "Cancelled.";
  // fetch rejects with a TypeError when the platform cannot be reached.
  if (error instanceof TypeError) return apiMessage(undefined);
  if (error instanceof Error) return error.message;
  return apiMessage(undefined);
}
