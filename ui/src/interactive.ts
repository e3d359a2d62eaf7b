// Marks, on the page's performance timeline, the first frame in which the
// user can act: start-up is measured from outside against this mark.

export const INTERACTIVE_MARK = "interactive";

/** Marks after the next frame has been painted (the second frame callback
 * runs once the first has been drawn). Later calls do nothing. */
export function markInteractiveAfterPaint(): void {
  if (performance.getEntriesByName(INTERACTIVE_MARK).length > 0) return;
  requestAnimationFrame(() =>
    requestAnimationFrame(() => {
      if (performance.getEntriesByName(INTERACTIVE_MARK).length === 0) performance.mark(INTERACTIVE_MARK);
    }),
  );
}
