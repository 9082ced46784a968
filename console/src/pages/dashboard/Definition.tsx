// A term's definition shown on hover or keyboard focus (WCAG 1.4.13: it
// stays while hovered, and Escape dismisses it), read by screen readers as
// the button's description.
import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

export function Definition(props: { id: string; term: string; children: ComponentChildren }) {
  const [open, setOpen] = useState(false);
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => event.key === "Escape" && setOpen(false);
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [open]);
  return (
    <span class="dash-def" onMouseEnter={() => setOpen(true)} onMouseLeave={() => setOpen(false)}>
      <button
        type="button"
        class="dash-def-button"
        aria-label={`What is ${props.term}?`}
        aria-describedby={props.id}
        onFocus={() => setOpen(true)}
        onBlur={() => setOpen(false)}
        // A tap (no hover on touch screens) shows it too; a tap elsewhere or Escape hides it.
        onClick={() => setOpen(true)}
        onKeyDown={(event) => event.key === "Escape" && setOpen(false)}
      >
        ?
      </button>
      <span role="tooltip" id={props.id} class="dash-tip" hidden={!open}>
        {props.children}
      </span>
    </span>
  );
}
