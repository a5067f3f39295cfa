/**
 * MuPDF's mutool (AGPL-3.0), only ever run as a separate program. Used for true redaction: MuPDF
 * removes the glyphs under a redaction area from the content streams (and blanks image pixels under
 * it), which a drawn box could never do.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { exec } from '../core/process.js';
import { requireEngine } from './registry.js';

const TIMEOUT_MS = 300_000;

/**
 * Runs in `mutool run` (MuPDF's JavaScript, 1.21 API). Matching is done on the structured text of each
 * page, character by character, so case sensitivity is ours to decide and every match has exact glyph
 * quads. One Redact annotation per match and line, then applyRedactions(black boxes, pixels mode).
 * Document info strings that contain a term are cleared too. Prints one JSON line of results.
 */
const REDACT_JS = String.raw`
var inPath = scriptArgs[0], outPath = scriptArgs[1];
var terms = JSON.parse(scriptArgs[2]);
var caseSensitive = scriptArgs[3] === 'true';
var fold = function (s) { return caseSensitive ? s : s.toLowerCase(); };
var doc = new PDFDocument(inPath);
var n = doc.countPages();
var pages = [];
for (var i = 0; i < n; i++) {
  var page = doc.loadPage(i);
  var chars = [];
  page.toStructuredText('preserve-whitespace').walk({
    onChar: function (c, origin, font, size, quad) { chars.push({ c: c, q: quad }); },
    endLine: function () { chars.push({ c: '\n', q: null }); }
  });
  // Folding must not change lengths, or indices would drift from chars: fold per character.
  var hay = chars.map(function (x) { var f = fold(x.c); return f.length === x.c.length ? f : x.c; }).join('');
  var matches = 0, boxes = 0;
  for (var t = 0; t < terms.length; t++) {
    var needle = fold(terms[t]);
    if (!needle.length) continue;
    var from = 0, at;
    while ((at = hay.indexOf(needle, from)) >= 0) {
      var rect = null;
      for (var k = at; k < at + needle.length; k++) {
        var q = chars[k].q;
        if (!q) continue;
        var r = [Math.min(q[0], q[2], q[4], q[6]), Math.min(q[1], q[3], q[5], q[7]), Math.max(q[0], q[2], q[4], q[6]), Math.max(q[1], q[3], q[5], q[7])];
        rect = rect ? [Math.min(rect[0], r[0]), Math.min(rect[1], r[1]), Math.max(rect[2], r[2]), Math.max(rect[3], r[3])] : r;
      }
      if (rect) { page.createAnnotation('Redact').setRect(rect); boxes++; }
      matches++;
      from = at + needle.length;
    }
  }
  if (boxes) page.applyRedactions(true, 2);
  if (matches) pages.push({ page: i + 1, matches: matches });
}
var info = ['Title', 'Author', 'Subject', 'Keywords', 'Creator', 'Producer'];
var clearedInfo = [];
for (var j = 0; j < info.length; j++) {
  var v = doc.getMetaData('info:' + info[j]);
  if (!v) continue;
  for (var t2 = 0; t2 < terms.length; t2++) if (terms[t2] && fold(v).indexOf(fold(terms[t2])) >= 0) { doc.setMetaData('info:' + info[j], ''); clearedInfo.push(info[j]); break; }
}
doc.save(outPath, 'garbage=deduplicate,compress,sanitize');
print('KILN_RESULT ' + JSON.stringify({ pages: pages, clearedInfo: clearedInfo }));
`;

export interface RedactionResult {
  pages: { page: number; matches: number }[];
  clearedInfo: string[];
}

export async function redact(input: string, output: string, terms: string[], caseSensitive: boolean, workDir: string, name: string, signal?: AbortSignal): Promise<RedactionResult> {
  const mutool = await requireEngine('mupdf');
  const script = path.join(workDir, 'kiln-redact.js');
  await writeFile(script, REDACT_JS);
  const r = await exec(mutool, ['run', script, input, output, JSON.stringify(terms), String(caseSensitive)], { signal, timeoutMs: TIMEOUT_MS, failCode: 'UNSUPPORTED_INPUT' }).catch((e: unknown) => {
    if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT') {
      throw new KilnError('UNSUPPORTED_INPUT', `MuPDF could not redact ${name}: ${e.message.split(input).join(name).split(output).join('the output')}`, { details: e.details });
    }
    throw e;
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('KILN_RESULT '));
  if (!line) throw new KilnError('INTERNAL', `mutool redaction gave no result: ${r.stderr.slice(-300)}`);
  return JSON.parse(line.slice('KILN_RESULT '.length)) as RedactionResult;
}
