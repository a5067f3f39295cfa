/**
 * The sheets of a workbook, in order and with their visibility, read from the part that lists them while
 * the ZIP guard inflates it anyway (no second pass): xl/workbook.xml of an XLSX (`state="hidden"` or
 * `"veryHidden"`), content.xml of an ODS (streamed: it holds every cell too; a hidden table has an
 * automatic style with `table:display="false"`, written before the tables). CSV holds one sheet: the
 * conversion exports the first visible one (LibreOffice's first sheet could be a hidden one, holding
 * lookup data the user never sees, while the visible sheet was dropped) and names the sheets left out.
 */
import type { ZipTap } from '../core/zip-guard.js';

export interface SheetInfo {
  name: string;
  hidden: boolean;
}

/** A sheet's tag (group 1: its attributes); for ODS also a table style's tag and its properties (2, 3). */
const PARTS: Record<string, { part: RegExp; tag: RegExp }> = {
  xlsx: { part: /^xl\/workbook\.xml$/, tag: /<(?:\w+:)?sheet\s([^>]*)>/g },
  ods: {
    part: /^content\.xml$/,
    tag: /<table:table\s([^>]*)>|<style:style\s([^>]*)>\s*<style:table-properties\s([^>]*)>/g,
  },
};

const attr = (attrs: string, name: string) => new RegExp(`(?:^|\\s)${name}="([^"]*)"`).exec(attrs)?.[1];

/** Longest tag kept between chunks, so that a sheet's tag split across two chunks is still found. */
const CARRY = 4096;

export function sheetNameTap(ext: string): { tap: ZipTap; sheets(): SheetInfo[] } | undefined {
  const kind = PARTS[ext];
  if (!kind) return undefined;
  const sheets: SheetInfo[] = [];
  /** ODS table styles that hide their table. */
  const hiddenStyles = new Set<string>();
  let rest = '';
  const utf8 = (s: string) => unescapeXml(Buffer.from(s, 'latin1').toString('utf8'));
  return {
    tap: {
      part: kind.part,
      data(chunk) {
        const text = rest + chunk.toString('latin1');
        let end = 0;
        for (const m of text.matchAll(kind.tag)) {
          end = m.index + m[0].length;
          if (m[2] !== undefined) {
            // An ODS table style: hidden when its properties say table:display="false".
            const name = attr(m[2], 'style:name');
            if (name && attr(m[2], 'style:family') === 'table' && attr(m[3]!, 'table:display') === 'false') hiddenStyles.add(name);
            continue;
          }
          const attrs = m[1]!;
          const name = attr(attrs, ext === 'ods' ? 'table:name' : 'name');
          if (name === undefined) continue;
          const hidden =
            ext === 'ods'
              ? hiddenStyles.has(attr(attrs, 'table:style-name') ?? '')
              : /^(hidden|veryHidden)$/.test(attr(attrs, 'state') ?? '');
          sheets.push({ name: utf8(name), hidden });
        }
        // Keep the unmatched tail only: a match is never counted twice.
        rest = text.slice(Math.max(end, text.length - CARRY));
      },
    },
    sheets: () => sheets,
  };
}

function unescapeXml(s: string): string {
  return s.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
    if (named[e.toLowerCase()]) return named[e.toLowerCase()]!;
    return String.fromCodePoint(e[1]!.toLowerCase() === 'x' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1)));
  });
}
