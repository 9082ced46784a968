import { pageCount } from "./alerts";

/** Previous / next over `count` records in pages of `size`; nothing when one page holds them. */
export function Pager(props: {
  label: string;
  page: number;
  count: number;
  size: number;
  disabled?: boolean;
  onPage: (page: number) => void;
}) {
  const pages = pageCount(props.count, props.size);
  if (pages <= 1) return null;
  return (
    <nav class="sa-pager" aria-label={props.label}>
      <button type="button" disabled={props.disabled || props.page <= 1} onClick={() => props.onPage(props.page - 1)}>
        Previous
      </button>
      <span>
        Page {props.page} of {pages}
      </span>
      <button
        type="button"
        disabled={props.disabled || props.page >= pages}
        onClick={() => props.onPage(props.page + 1)}
      >
        Next
      </button>
    </nav>
  );
}
