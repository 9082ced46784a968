import { afterEach, describe, expect, it, vi } from "vitest";
import { fileNameFromDisposition, saveBlob } from "./download";

describe("fileNameFromDisposition", () => {
  it("reads the API's quoted file name", () => {
    expect(fileNameFromDisposition('attachment; filename="listings_2026-10-30_2026-11-28.csv"')).toBe(
      "listings_2026-10-30_2026-11-28.csv",
    );
  });
  it("reads tokens, escapes, any letter case and spaces", () => {
    expect(fileNameFromDisposition("attachment; filename=revenue.xlsx")).toBe("revenue.xlsx");
    expect(fileNameFromDisposition('attachment;FileName = "a \\"b\\" c.csv"')).toBe('a "b" c.csv');
    expect(fileNameFromDisposition('attachment; size=12; filename="x;y.csv"')).toBe("x;y.csv");
  });
  it("prefers filename* (RFC 8187) and decodes it", () => {
    expect(
      fileNameFromDisposition("attachment; filename=\"na_ve.csv\"; filename*=UTF-8''na%C3%AFve%20report.csv"),
    ).toBe("naïve report.csv");
    expect(fileNameFromDisposition("attachment; filename*=iso-8859-1'en'caf%E9.csv")).toBe("café.csv");
    // Undecodable: the plain name.
    expect(fileNameFromDisposition("attachment; filename*=UTF-8''%E9%ZZ.csv; filename=\"plain.csv\"")).toBe("plain.csv");
  });
  it("never returns a path", () => {
    expect(fileNameFromDisposition('attachment; filename="../../etc/passwd"')).toBe("passwd");
    expect(fileNameFromDisposition('attachment; filename="C:\\\\dir\\\\x.csv"')).toBe("x.csv");
    expect(fileNameFromDisposition('attachment; filename=".."')).toBeUndefined();
  });
  it("is undefined without a name", () => {
    expect(fileNameFromDisposition(null)).toBeUndefined();
    expect(fileNameFromDisposition("attachment")).toBeUndefined();
    expect(fileNameFromDisposition('attachment; filename=""')).toBeUndefined();
  });
});

describe("saveBlob", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.useRealTimers();
  });

  it("clicks a download link to an object URL, then revokes it", () => {
    vi.useFakeTimers();
    const link = { href: "", download: "", hidden: false, click: vi.fn(), remove: vi.fn() };
    const append = vi.fn();
    vi.stubGlobal("document", { createElement: () => link, body: { append } });
    const revoke = vi.spyOn(URL, "revokeObjectURL").mockImplementation(() => {});
    const create = vi.spyOn(URL, "createObjectURL").mockReturnValue("blob:villa/1");
    saveBlob(new Blob(["a,b\n"]), "x.csv");
    expect(link).toMatchObject({ href: "blob:villa/1", download: "x.csv", hidden: true });
    expect(append).toHaveBeenCalledWith(link);
    expect(link.click).toHaveBeenCalledOnce();
    expect(link.remove).toHaveBeenCalledOnce();
    expect(revoke).not.toHaveBeenCalled();
    vi.advanceTimersByTime(60_000);
    expect(revoke).toHaveBeenCalledWith("blob:villa/1");
    create.mockRestore();
    revoke.mockRestore();
  });
});
