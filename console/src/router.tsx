// A tiny History API router: six flat routes do not need a library.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/** Where the platform serves the console; Vite's `base` says the same. */
export const BASE = import.meta.env.BASE_URL.replace(/\/$/, "");

/** The path inside the console ("/", "/exports"...), without BASE. */
function currentPath(): string {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : "/";
  return path.replace(/\/+$/, "") || "/";
}

/** The event navigate() dispatches: pushState itself fires none. */
const NAVIGATE = "console:navigate";

export function navigate(path: string): void {
  history.pushState(null, "", BASE + path);
  dispatchEvent(new Event(NAVIGATE));
}

/**
 * Calls `listener` whenever the URL changes: navigate() here, or the
 * browser's Back and Forward (popstate). Returns the unsubscribe, ready to be
 * a useEffect cleanup.
 */
export function onNavigate(listener: () => void): () => void {
  addEventListener("popstate", listener);
  addEventListener(NAVIGATE, listener);
  return () => {
    removeEventListener("popstate", listener);
    removeEventListener(NAVIGATE, listener);
  };
}

export function usePath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => onNavigate(() => setPath(currentPath())), []);
  return path;
}

export function Link(props: { to: string; current: boolean; children: ComponentChildren }) {
  const onClick = (event: MouseEvent) => {
    // Leave new-tab and download clicks to the browser.
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.to);
  };
  return (
    <a href={BASE + props.to} onClick={onClick} aria-current={props.current ? "page" : undefined}>
      {props.children}
    </a>
  );
}
