// A chart's numbers as a table: visually hidden until its toggle shows it,
// always there for screen readers and tests.
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";

export function TableToggle(props: { id: string; what: string; children: ComponentChildren }) {
  const [shown, setShown] = useState(false);
  return (
    <div class="dash-table-toggle">
      <button type="button" aria-expanded={shown} aria-controls={props.id} onClick={() => setShown((s) => !s)}>
        {shown ? `Hide the ${props.what} table` : `Show the ${props.what} as a table`}
      </button>
      {/* A focusable region: a wide table scrolls inside it, never the page. */}
      <div
        id={props.id}
        class={shown ? "dash-scroll" : "visually-hidden"}
        role="region"
        aria-label={`${props.what} (table)`}
        tabIndex={shown ? 0 : undefined}
      >
        {props.children}
      </div>
    </div>
  );
}
