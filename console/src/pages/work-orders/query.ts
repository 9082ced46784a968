// The page's query string as state: filters and ranges live in the URL, so a
// screen can be bookmarked, shared and walked back with the browser's Back.
// The router (src/router.tsx) routes on the path only; this follows the query.
import { useEffect, useState } from "preact/hooks";
import { BASE, navigate, onNavigate } from "../../router";

function currentSearch(): string {
  return location.search;
}

/** The current path inside the console, without BASE (as the router sees it). */
function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return path || "/";
}

/**
 * The query string built from `values`, dropping empty ones, in the order
 * given (so URLs read the same every time).
 */
export function toQuery(values: Record<string, string | number | undefined | null>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined && value !== null && value !== "") params.set(key, String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/**
 * The query string's parameters, re-read on every navigation, and a setter
 * that pushes a new history entry with the given values (empty ones left out).
 */
export function useQuery(): [URLSearchParams, (values: Record<string, string | number | undefined | null>) => void] {
  const [search, setSearch] = useState(currentSearch);
  useEffect(() => onNavigate(() => setSearch(currentSearch())), []);
  const set = (values: Record<string, string | number | undefined | null>) => {
    const next = toQuery(values);
    if (next !== location.search) navigate(currentPath() + next);
  };
  return [new URLSearchParams(search), set];
}
