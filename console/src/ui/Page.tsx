import type { ComponentChildren } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** A screen: its heading takes focus on navigation so screen readers announce it. */
export function Page({ title, children }: { title: string; children: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Villa console`;
    heading.current?.focus();
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
