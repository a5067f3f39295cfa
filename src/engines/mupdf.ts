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
 * quads; whitespace runs (line ends too) match any whitespace in a term. One Redact annotation per match
 * and text line, then applyRedactions(black boxes, pixels mode).
 * Document info strings that contain a term are cleared too. Prints one JSON line of results.
 */
const REDACT_JS = String.raw`
var inPath = scriptArgs[0], outPath = scriptArgs[1];
var terms = JSON.parse(scriptArgs[2]);
var caseSensitive = scriptArgs[3] === 'true';
var fold = function (s) { return caseSensitive ? s : s.toLowerCase(); };
var isSpace = function (c) { return /^\s$/.test(c); };
var doc = new PDFDocument(inPath);
var n = doc.countPages();
var pages = [];
var annotationHits = 0;
function rectOf(q) {
  return [Math.min(q[0], q[2], q[4], q[6]), Math.min(q[1], q[3], q[5], q[7]), Math.max(q[0], q[2], q[4], q[6]), Math.max(q[1], q[3], q[5], q[7])];
}
for (var i = 0; i < n; i++) {
  var page = doc.loadPage(i);
  var chars = [];
  var line = 0;
  page.toStructuredText('preserve-whitespace').walk({
    onChar: function (c, origin, font, size, quad) { chars.push({ c: c, q: quad, line: line }); },
    endLine: function () { chars.push({ c: ' ', q: null, line: line }); line++; }
  });
  // Normalised text: every run of whitespace (line ends included) is one space, so a term matches
  // across line breaks and irregular spacing. map[k] lists the characters behind position k.
  var hay = '', map = [];
  for (var j = 0; j < chars.length; j++) {
    var ch = chars[j].c;
    if (isSpace(ch)) {
      if (hay.length && hay[hay.length - 1] === ' ') { map[map.length - 1].push(j); continue; }
      hay += ' '; map.push([j]);
    } else {
      var f = fold(ch);
      // Folding must keep one position per character, or positions would drift from chars.
      hay += f.length === 1 ? f : ch; map.push([j]);
    }
  }
  var matches = 0, boxes = 0;
  for (var t = 0; t < terms.length; t++) {
    var needle = fold(terms[t].replace(/\s+/g, ' ').trim());
    if (!needle.length) continue;
    var from = 0, at;
    while ((at = hay.indexOf(needle, from)) >= 0) {
      // One redaction box per text line the match touches, so a match that wraps does not black out the lines between.
      var perLine = {};
      for (var k = at; k < at + needle.length; k++) {
        for (var m = 0; m < map[k].length; m++) {
          var c2 = chars[map[k][m]];
          if (!c2.q || isSpace(c2.c)) continue;
          var r = rectOf(c2.q), cur = perLine[c2.line];
          perLine[c2.line] = cur ? [Math.min(cur[0], r[0]), Math.min(cur[1], r[1]), Math.max(cur[2], r[2]), Math.max(cur[3], r[3])] : r;
        }
      }
      for (var ln in perLine) { page.createAnnotation('Redact').setRect(perLine[ln]); boxes++; }
      matches++;
      from = at + needle.length;
    }
  }
  if (boxes) page.applyRedactions(true, 2);
  if (matches) pages.push({ page: i + 1, matches: matches });
  // Form-field values and annotation texts are not page content: report them so the caller can bake
  // them into the page (flatten) and redact again.
  var notes = [];
  try { notes = notes.concat(page.getWidgets().map(function (w) { return String(w.getValue() || ''); })); } catch (e) {}
  try { notes = notes.concat(page.getAnnotations().map(function (a) { return String(a.getContents() || ''); })); } catch (e) {}
  for (var nn = 0; nn < notes.length; nn++) {
    var nv = fold(notes[nn]).replace(/\s+/g, ' ');
    for (var t3 = 0; t3 < terms.length; t3++) if (terms[t3].trim() && nv.indexOf(fold(terms[t3]).replace(/\s+/g, ' ').trim()) >= 0) { annotationHits++; break; }
  }
}
var info = ['Title', 'Author', 'Subject', 'Keywords', 'Creator', 'Producer'];
var clearedInfo = [];
for (var j2 = 0; j2 < info.length; j2++) {
  var v = doc.getMetaData('info:' + info[j2]);
  if (!v) continue;
  var fv = fold(v).replace(/\s+/g, ' ');
  for (var t2 = 0; t2 < terms.length; t2++) if (terms[t2] && fv.indexOf(fold(terms[t2]).replace(/\s+/g, ' ').trim()) >= 0) { doc.setMetaData('info:' + info[j2], ''); clearedInfo.push(info[j2]); break; }
}
doc.save(outPath, 'garbage=deduplicate,compress,sanitize');
print('KILN_RESULT ' + JSON.stringify({ pages: pages, clearedInfo: clearedInfo, annotationHits: annotationHits }));
`;

export interface RedactionResult {
  pages: { page: number; matches: number }[];
  clearedInfo: string[];
  /** Form fields and annotations whose value or text contains a term (not page content). */
  annotationHits: number;
}

export async function redact(
  input: string,
  output: string,
  terms: string[],
  caseSensitive: boolean,
  workDir: string,
  name: string,
  signal?: AbortSignal,
): Promise<RedactionResult> {
  const mutool = await requireEngine('mupdf');
  const script = path.join(workDir, 'kiln-redact.js');
  await writeFile(script, REDACT_JS);
  const r = await exec(mutool, ['run', script, input, output, JSON.stringify(terms), String(caseSensitive)], {
    signal,
    timeoutMs: TIMEOUT_MS,
    failCode: 'UNSUPPORTED_INPUT',
  }).catch((e: unknown) => {
    if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT') {
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `MuPDF could not redact ${name}: ${e.message.split(input).join(name).split(output).join('the output')}`,
        { details: e.details },
      );
    }
    throw e;
  });
  const line = r.stdout.split('\n').find((l) => l.startsWith('KILN_RESULT '));
  if (!line) throw new KilnError('INTERNAL', `mutool redaction gave no result: ${r.stderr.slice(-300)}`);
  return JSON.parse(line.slice('KILN_RESULT '.length)) as RedactionResult;
}
