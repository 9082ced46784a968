// Pages of a list the API answers page by page ({page, limit, total}).

/** How many pages `total` records make in pages of `size`: one at least, so "page 1 of 1" reads right. */
export function pageCount(total: number, size: number): number {
  return Math.max(1, Math.ceil(total / size));
}
