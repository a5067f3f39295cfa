/**
 * The names of a workbook's sheets, read from the part that lists them while the ZIP guard inflates it
 * anyway (no second pass): xl/workbook.xml of an XLSX, content.xml of an ODS (streamed: it holds every
 * cell too). CSV holds one sheet, so a conversion to it names the sheets it leaves out.
 */
import type { ZipTap } from '../core/zip-guard.js';

const PARTS: Record<string, { part: RegExp; sheet: RegExp }> = {
  xlsx: { part: /^xl\/workbook\.xml$/, sheet: /<(?:\w+:)?sheet\s[^>]*?\bname="([^"]*)"/g },
  ods: { part: /^content\.xml$/, sheet: /<table:table\s[^>]*?\btable:name="([^"]*)"/g },
};

/** Longest tag kept between chunks, so that a sheet's tag split across two chunks is still found. */
const CARRY = 4096;

export function sheetNameTap(ext: string): { tap: ZipTap; names(): string[] } | undefined {
  const kind = PARTS[ext];
  if (!kind) return undefined;
  const names: string[] = [];
  let rest = '';
  return {
    tap: {
      part: kind.part,
      data(chunk) {
        const text = rest + chunk.toString('latin1');
        let end = 0;
        for (const m of text.matchAll(kind.sheet)) {
          names.push(Buffer.from(m[1]!, 'latin1').toString('utf8'));
          end = m.index + m[0].length;
        }
        // Keep the unmatched tail only: a match is never counted twice.
        rest = text.slice(Math.max(end, text.length - CARRY));
      },
    },
    names: () => names.map(unescapeXml),
  };
}

function unescapeXml(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
    if (named[e.toLowerCase()]) return named[e.toLowerCase()]!;
    return String.fromCodePoint(e[1]!.toLowerCase() === 'x' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)));
  });
}
