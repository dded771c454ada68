/**
 * A small RFC 4180 CSV reader: a header row, then records as objects.
 *
 * @module
 */

/**
 * Parses CSV text with a header row into one object per record. Quoted
 * fields may hold commas, doubled quotes and newlines. A record with more
 * fields than the header is an error; missing trailing fields are empty.
 *
 * @param text The CSV text.
 * @returns The records.
 * @throws {SyntaxError} Naming the 1-based record (header not counted).
 */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let quoted = false;
  let any = false;
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += c;
      continue;
    }
    if (c === '"' && field === "") {
      quoted = true;
      any = true;
    } else if (c === ",") {
      row.push(field);
      field = "";
      any = true;
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      if (any || field !== "") {
        row.push(field);
        rows.push(row);
      }
      row = [];
      field = "";
      any = false;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) {
    throw new SyntaxError(`Record ${rows.length} has an unclosed quote`);
  }
  if (any || field !== "") {
    row.push(field);
    rows.push(row);
  }
  const [header, ...records] = rows;
  if (header === undefined) return [];
  return records.map((cells, index) => {
    if (cells.length > header.length) {
      throw new SyntaxError(
        `Record ${
          index + 1
        } has ${cells.length} fields but the header has ${header.length}`,
      );
    }
    const record: Record<string, string> = {};
    header.forEach((name, j) => (record[name] = cells[j] ?? ""));
    return record;
  });
}
