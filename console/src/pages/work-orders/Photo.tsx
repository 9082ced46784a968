// Photos of field notes. The file route needs the bearer token, so an <img>
// cannot load it by URL: the bytes are fetched through the API client and
// shown from a blob: URL (which the console's CSP allows for images).
import { useEffect, useState } from "preact/hooks";
import { api } from "../../api/client";
import { ErrorMessage } from "../../ui/Status";

/** A blob: URL for `blob` while the component is shown, revoked after. */
export function useObjectUrl(blob: Blob | null | undefined): string | undefined {
  const [url, setUrl] = useState<string | undefined>(undefined);
  useEffect(() => {
    if (!blob) return setUrl(undefined);
    const made = URL.createObjectURL(blob);
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [blob]);
  return url;
}

/** A field note's photo, loaded from the API. */
export function NotePhoto({ noteId, alt }: { noteId: string; alt: string }) {
  const [blob, setBlob] = useState<Blob | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  useEffect(() => {
    const controller = new AbortController();
    setError(undefined);
    api
      .GET("/maintenance/field-notes/{id}/file", {
        params: { path: { id: noteId } },
        parseAs: "blob",
        signal: controller.signal,
      })
      .then(
        ({ data, response }) => {
          if (controller.signal.aborted) return;
          if (!response.ok || !(data instanceof Blob)) throw new Error(`The photo could not be loaded (HTTP ${response.status}).`);
          setBlob(data);
        },
      )
      .catch((e) => !controller.signal.aborted && setError(e));
    return () => controller.abort();
  }, [noteId]);
  const url = useObjectUrl(blob);
  if (error) return <ErrorMessage error={error} />;
  return url ? <img class="thumb" src={url} alt={alt} /> : null;
}

/** A photo chosen on this device, shown before (and while) it uploads. */
export function LocalPhoto({ file, alt }: { file: File; alt: string }) {
  const url = useObjectUrl(file);
  return url ? <img class="thumb" src={url} alt={alt} /> : null;
}
