// Saving an export's file. The download route needs the bearer token, so a
// plain link cannot fetch it: the console fetches it through the API client
// as a Blob and hands it to the browser through an object URL and an
// <a download>, named as the API's Content-Disposition says.

/**
 * The file name of a Content-Disposition header (RFC 6266): `filename*`
 * (RFC 8187, e.g. UTF-8''na%C3%AFve.csv) wins over `filename`, quoted or not.
 * Undefined when there is none. Path separators are never part of a name.
 */
export function fileNameFromDisposition(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const params = parameters(header);
  const extended = params.get("filename*");
  if (extended !== undefined) {
    const decoded = decodeExtended(extended);
    if (decoded) return safeName(decoded);
  }
  const plain = params.get("filename");
  return plain ? safeName(plain) : undefined;
}

/** The header's parameters by lower-case name, quoted strings unescaped; the type is skipped. */
function parameters(header: string): Map<string, string> {
  const params = new Map<string, string>();
  // name=token or name="quoted \" string", after a ';'.
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (const m of header.matchAll(re)) {
    const name = m[1]!.toLowerCase();
    const value = m[2] !== undefined ? m[2].replace(/\\(.)/g, "$1") : m[3]!.trim();
    if (!params.has(name)) params.set(name, value);
  }
  return params;
}

/** charset'language'percent-encoded (RFC 8187); UTF-8 and ISO-8859-1 only, as the RFC allows. */
function decodeExtended(value: string): string | undefined {
  const m = /^([^']*)'[^']*'(.*)$/.exec(value.trim());
  if (!m) return undefined;
  const charset = m[1]!.toLowerCase();
  const encoded = m[2]!;
  try {
    if (charset === "utf-8") return decodeURIComponent(encoded);
    if (charset === "iso-8859-1") {
      return encoded.replace(/%([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** The last path segment, without control characters: a name, never a path. */
function safeName(name: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  const base = name.split(/[/\\]/).pop()!.replace(/[\u0000-\u001f\u007f]/g, "").trim();
  return base && base !== "." && base !== ".." ? base : undefined;
}

/** Hands `blob` to the browser as a download named `fileName`. */
export function saveBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The browser has started reading the URL by now; a minute is ample.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
