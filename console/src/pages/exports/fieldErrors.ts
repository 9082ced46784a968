// A refused export request's problems, by the form's fields: the reporting
// surface's error lists each bad field (`error.fields`) beside its message.

import type { components } from "../../api/schema";

type ReportingError = components["schemas"]["ReportingError"];

export interface FieldErrors {
  /** A field's message, by the form's field name ("listingIds[3]" counts as "listingIds"). */
  fields: Record<string, string>;
  /** What names no field of the form: shown with the form, in the API's words. */
  other: string[];
  /** The API's message when it covers several fields ("2 fields are invalid"). */
  summary?: string;
}

export function fieldErrors(body: ReportingError, known: readonly string[]): FieldErrors {
  const result: FieldErrors = { fields: {}, other: [] };
  const problems = body.error.fields ?? [];
  for (const { field, message } of problems) {
    const name = field.split(/[[.]/)[0] ?? field;
    if (known.includes(name)) {
      result.fields[name] = result.fields[name] ? `${result.fields[name]}; ${message}` : message;
    } else {
      result.other.push(`${field}: ${message}`);
    }
  }
  if (problems.length === 0) result.other.push(body.error.message);
  else if (problems.length > 1) result.summary = body.error.message.split(": ")[0];
  return result;
}
