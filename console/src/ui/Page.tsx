import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** Whether a screen was shown since the page loaded: the first one leaves the focus alone. */
let shownBefore = false;

/**
 * A screen: its heading takes focus when the user moves to it, so screen
 * readers announce it; on the page's first load the focus stays at the top,
 * where the skip link is the first Tab.
 */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Villa console`;
    if (shownBefore) heading.current?.focus();
    shownBefore = true;
  }, [title]);
  return (
    <>
      <h1 tabIndex={-1} ref={heading}>
        {title}
      </h1>
      {children}
    </>
  );
}
