// Previous / next over a list's pages. Where the page is in the URL the
// moves are links (they can be opened, shared, gone back to); where it is
// the screen's own state they are buttons.
import { Link } from "../router";
import { pageCount } from "../paging";

type Moves =
  /** The address of a page: links. */
  | { href: (page: number) => string }
  /** Go to a page: buttons, disabled while `disabled` (a page loading). */
  | { onPage: (page: number) => void; disabled?: boolean };

/** Nothing when one page holds the `total` records. */
export function Pager(props: { label: string; page: number; total: number; size: number } & Moves) {
  const { label, page } = props;
  const pages = pageCount(props.total, props.size);
  if (pages <= 1) return null;
  const move = (to: number, words: string, possible: boolean) => {
    if ("href" in props) {
      return possible ? (
        <Link to={props.href(to)} current={false}>
          {words}
        </Link>
      ) : null;
    }
    return (
      <button type="button" disabled={props.disabled || !possible} onClick={() => props.onPage(to)}>
        {words}
      </button>
    );
  };
  return (
    <nav class="pager" aria-label={label}>
      {move(page - 1, "Previous page", page > 1)}
      <span>
        Page {page} of {pages}
      </span>
      {move(page + 1, "Next page", page < pages)}
    </nav>
  );
}
