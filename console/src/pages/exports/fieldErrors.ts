// The reporting surface's validation errors list no fields apart from its
// message (api/src/error/shapes/reporting.rs): one bad member reads
// "endDate: must not be before startDate"; several read
// "2 fields are invalid: type: ...; endDate: ..." (or "N problems in the
// request; the first 20 are listed: ..."). This splits that message back
// into each field's own words, so the form shows them next to the fields.

export interface FieldErrors {
  /** A field's message, by the form's field name ("listingIds[3]" counts as "listingIds"). */
  fields: Record<string, string>;
  /** What names no field of the form: shown with the form, in the API's words. */
  other: string[];
  /** The count leading a message that lists several ("2 fields are invalid"). */
  summary?: string;
}

/** "field: message" where field is a member name, maybe with an index or a path. */
const ITEM = /^([A-Za-z_][\w]*)(?:\[\d+\]|\.[\w.[\]]+)*: ([\s\S]+)$/;
/** Where one "field: message" item ends and the next begins. */
const SEPARATOR = /; (?=[A-Za-z_][\w]*(?:\[\d+\]|\.[\w.[\]]+)*: )/;
/** The count that leads a message listing several fields. */
const LEAD = /^(?:\d+ fields are invalid|\d+ problems in the request; the first \d+ are listed): /;

export function fieldErrors(message: string, known: readonly string[]): FieldErrors {
  const result: FieldErrors = { fields: {}, other: [] };
  const lead = LEAD.exec(message);
  if (lead) result.summary = lead[0].slice(0, -2);
  const items = lead ? message.slice(lead[0].length).split(SEPARATOR) : [message];
  for (const item of items) {
    const m = ITEM.exec(item.trim());
    const field = m?.[1];
    if (m && field && known.includes(field)) {
      const text = m[2]!.trim();
      result.fields[field] = result.fields[field] ? `${result.fields[field]}; ${text}` : text;
    } else {
      result.other.push(item.trim());
    }
  }
  return result;
}
