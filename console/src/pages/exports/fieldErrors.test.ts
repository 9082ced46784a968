import { describe, expect, it } from "vitest";
import { fieldErrors } from "./fieldErrors";

const FIELDS = ["type", "format", "startDate", "endDate", "listingIds"];

const refusal = (message: string, fields: { field: string; message: string }[]) => ({
  error: { code: "VALIDATION_ERROR", message, retryAfter: null, fields },
});

describe("fieldErrors", () => {
  it("puts each field's message by its field", () => {
    expect(
      fieldErrors(refusal("endDate: must not be before startDate", [{ field: "endDate", message: "must not be before startDate" }]), FIELDS),
    ).toEqual({ fields: { endDate: "must not be before startDate" }, other: [] });
  });

  it("keeps the count of several, and joins two problems of one field (a list's members)", () => {
    const found = fieldErrors(
      refusal("3 fields are invalid: type: bad; listingIds[0]: unknown; listingIds[2]: unknown", [
        { field: "type", message: "bad" },
        { field: "listingIds[0]", message: "unknown listing" },
        { field: "listingIds[2]", message: "malformed" },
      ]),
      FIELDS,
    );
    expect(found.fields).toEqual({ type: "bad", listingIds: "unknown listing; malformed" });
    expect(found.summary).toBe("3 fields are invalid");
  });

  it("shows what names no field of the form, or no field at all, with the form", () => {
    expect(fieldErrors(refusal("currency: unknown", [{ field: "currency", message: "unknown" }]), FIELDS)).toEqual({
      fields: {},
      other: ["currency: unknown"],
    });
    expect(fieldErrors(refusal("the body must be a JSON object", []), FIELDS).other).toEqual(["the body must be a JSON object"]);
  });
});
