/**
 * Whether a CSV fits in one spreadsheet sheet. LibreOffice's CSV import silently drops what does not:
 * a 20 000-column file came out with 16 384 columns, and rows past 1 048 576 vanish the same way, with
 * exit 0 and no message. The file is read once (streamed, quote-aware) and refused before conversion.
 */
import { createReadStream } from 'node:fs';
import { KilnError } from '../../core/errors.js';
import type { TextEncodingName } from '../../core/text-encoding.js';

/** LibreOffice Calc's sheet size (7.4 default: 16 384 columns, XFD; 1 048 576 rows), the same as Excel's. */
export const SHEET_MAX_ROWS = 1_048_576;
export const SHEET_MAX_COLUMNS = 16_384;

/** Records (rows) and the most fields in one record, counted outside double-quoted fields. */
export async function csvShape(file: string, encoding: TextEncodingName, separator: string): Promise<{ rows: number; columns: number }> {
  // Only ASCII matters here (quote, separator, line ends), but in UTF-16 or Shift_JIS those bytes can
  // sit inside other characters: decode first. (Windows-1252's 0x80–0x9F mapping changes no ASCII.)
  const decoder = new TextDecoder(encoding === 'windows-1252' ? 'latin1' : encoding);
  let rows = 0;
  let columns = 0;
  let fields = 1;
  let quoted = false;
  let empty = true;
  const scan = (text: string) => {
    for (const ch of text) {
      if (ch === '"') quoted = !quoted;
      else if (!quoted && (ch === '\n' || ch === '\r')) {
        if (!empty) {
          rows++;
          if (fields > columns) columns = fields;
        }
        fields = 1;
        empty = true;
        continue;
      } else if (!quoted && ch === separator) fields++;
      empty = false;
    }
  };
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>)
    scan(decoder.decode(chunk, { stream: true }));
  scan(decoder.decode());
  if (!empty) {
    rows++;
    if (fields > columns) columns = fields;
  }
  return { rows, columns };
}

/** LIMIT_EXCEEDED when the CSV has more rows or columns than a sheet holds; `skipRows` are not imported (a `sep=` line). */
export async function assertCsvFitsSheet(file: string, encoding: TextEncodingName, separator: string, skipRows = 0): Promise<void> {
  const shape = await csvShape(file, encoding, separator);
  const rows = shape.rows - skipRows;
  const columns = shape.columns;
  const over = [
    rows > SHEET_MAX_ROWS ? `${rows} rows (a sheet holds ${SHEET_MAX_ROWS})` : '',
    columns > SHEET_MAX_COLUMNS ? `${columns} columns (a sheet holds ${SHEET_MAX_COLUMNS})` : '',
  ].filter(Boolean);
  if (over.length)
    throw new KilnError('LIMIT_EXCEEDED', `The CSV has ${over.join(' and ')}: the rest would be dropped. Split the file first.`, {
      details: { rows, columns, maxRows: SHEET_MAX_ROWS, maxColumns: SHEET_MAX_COLUMNS },
    });
}
