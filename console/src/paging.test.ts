import { describe, expect, it } from "vitest";
import { pageCount } from "./paging";

describe("pageCount", () => {
  it("counts the pages, one at least", () => {
    expect(pageCount(0, 20)).toBe(1);
    expect(pageCount(20, 20)).toBe(1);
    expect(pageCount(21, 20)).toBe(2);
    expect(pageCount(41, 20)).toBe(3);
  });
});
