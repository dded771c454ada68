// Text tables for people (the summary `run` prints, `diff`'s, a matrix's
// comparison, a classification's labels), their columns padded by the
// columns each cell takes on a terminal: a metric or a label in Chinese or
// with an emoji takes two columns a character. The display-width table is
// loaded only for a cell that holds a character the tables do not write
// themselves, so a run whose metrics are ASCII does not pay for it.

// Printable ASCII and the marks the tables write (–, ±, …, →, ≥, ≤, Δ, −,
// ⏎), each one column.
const OWN = /^[\x20-\x7e±–…→≥≤Δ−⏎]*$/;

/**
 * The rows, each a line of its cells padded to their column's width and
 * two spaces apart, the last cell unpadded.
 *
 * @param rows The header and the rows, each with as many cells.
 * @returns One line per row.
 */
export async function alignRows(
  rows: readonly (readonly string[])[],
): Promise<string[]> {
  const width = rows.every((r) => r.every((cell) => OWN.test(cell)))
    ? (text: string) => text.length
    : (await import("./_width.ts")).displayWidth;
  const widths =
    rows[0]?.map((_, i) => Math.max(...rows.map((r) => width(r[i]!)))) ?? [];
  return rows.map((r) =>
    r.map((cell, i) => cell + " ".repeat(widths[i]! - width(cell)))
      .join("  ").trimEnd()
  );
}
