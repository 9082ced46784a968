import { describe, expect, it } from "vitest";
import { fieldErrors } from "./fieldErrors";

const FIELDS = ["type", "format", "startDate", "endDate", "listingIds"];

describe("fieldErrors", () => {
  it("gives one field's message (the API's single-problem form)", () => {
    expect(fieldErrors("startDate: startDate must not be after endDate (2026-03-01)", FIELDS)).toEqual({
      fields: { startDate: "startDate must not be after endDate (2026-03-01)" },
      other: [],
    });
  });

  it("splits a message listing several fields, messages with colons and commas included", () => {
    const message =
      "2 fields are invalid: type: type must be one of reservations, listings, occupancy, revenue; endDate: must not be before startDate";
    expect(fieldErrors(message, FIELDS)).toEqual({
      fields: {
        type: "type must be one of reservations, listings, occupancy, revenue",
        endDate: "must not be before startDate",
      },
      other: [],
      summary: "2 fields are invalid",
    });
    expect(fieldErrors("2 fields are invalid: type: type is required: one of a, b; format: bad", FIELDS).fields).toEqual({
      type: "type is required: one of a, b",
      format: "bad",
    });
  });

  it("puts indexed members under their field, and what names no field of the form apart", () => {
    const message =
      "3 fields are invalid: listingIds[1]: must be a string; listingIds: unknown listing x; currency: must be a string";
    expect(fieldErrors(message, FIELDS)).toEqual({
      fields: { listingIds: "must be a string; unknown listing x" },
      other: ["currency: must be a string"],
      summary: "3 fields are invalid",
    });
  });

  it("keeps the lead of a long list and a message naming no field", () => {
    const long = "25 problems in the request; the first 20 are listed: startDate: bad date; endDate: bad date";
    expect(fieldErrors(long, FIELDS)).toMatchObject({
      fields: { startDate: "bad date", endDate: "bad date" },
      summary: "25 problems in the request; the first 20 are listed",
    });
    expect(fieldErrors("the body is not valid JSON", FIELDS)).toEqual({ fields: {}, other: ["the body is not valid JSON"] });
  });
});
