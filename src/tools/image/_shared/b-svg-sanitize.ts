/**
 * SVG sanitizing before librsvg renders an upload. Whitelisting a full XML parse would be ideal, but
 * a careful tokenizer is enough for what must go: scripts, foreignObject (HTML inside SVG), event
 * handlers, DOCTYPE (entities can pull in files), processing instructions (xml-stylesheet), and
 * every reference to something outside the document (href, xlink:href, url(), @import). Only
 * same-document fragments (#id) and raster data: URIs are kept.
 */

export interface SanitizeReport {
  removedElements: number;
  removedAttributes: number;
  removedReferences: number;
  removedDoctype: boolean;
  /** Markup the tokenizer could not read: the caller must refuse the file rather than pass it on. */
  malformed: boolean;
}

const DROP_ELEMENTS = new Set(['script', 'foreignobject', 'iframe', 'embed', 'object', 'audio', 'video', 'canvas', 'handler', 'listener']);
const SAFE_DATA = /^data:image\/(png|jpe?g|gif|webp|avif|bmp);/i;

const TOKEN =
  /<!--[\s\S]*?-->|<!\[CDATA\[[\s\S]*?\]\]>|<!DOCTYPE(?:[^[>]|\[[\s\S]*?\])*>|<\?[\s\S]*?\?>|<\/?[A-Za-z_][\w:.-]*(?:\s+[^\s=/>]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+))?)*\s*\/?>/g;
const ATTR = /([^\s=/>]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s>]+))?/g;

function localName(name: string): string {
  const i = name.indexOf(':');
  return (i >= 0 ? name.slice(i + 1) : name).toLowerCase();
}

function isSafeRef(v: string): boolean {
  const t = v.trim();
  return t.startsWith('#') || SAFE_DATA.test(t);
}

/** Replaces external url(...) and drops @import in CSS text; counts what it removed. */
export function sanitizeCss(css: string, report: SanitizeReport): string {
  let out = css.replace(/@import[^;]*;?/gi, () => {
    report.removedReferences++;
    return '';
  });
  out = out.replace(/url\(\s*(["']?)([^"')]*)\1\s*\)/gi, (m, _q: string, ref: string) => {
    if (isSafeRef(ref)) return m;
    report.removedReferences++;
    return 'none';
  });
  // Escaped forms (u\72l, \75rl) could smuggle a url() past the pattern above: drop any CSS escapes.
  return out.replace(/\\[0-9a-f]{1,6}\s?/gi, '');
}

export function sanitizeSvg(svg: string): { svg: string; report: SanitizeReport } {
  const report: SanitizeReport = {
    removedElements: 0,
    removedAttributes: 0,
    removedReferences: 0,
    removedDoctype: false,
    malformed: false,
  };
  let out = '';
  let last = 0;
  // Depth inside a dropped element: everything there is discarded.
  let skip = 0;
  let skipName = '';
  let inStyle = false;
  TOKEN.lastIndex = 0;
  for (let m = TOKEN.exec(svg); m; m = TOKEN.exec(svg)) {
    const tok = m[0];
    const text = svg.slice(last, m.index);
    last = m.index + tok.length;
    if (/<[A-Za-z_!?/]/.test(text)) report.malformed = true;
    if (skip === 0) out += inStyle ? sanitizeCss(text, report) : text;
    if (tok.startsWith('<!--')) continue;
    if (tok.startsWith('<![CDATA[')) {
      if (skip === 0) out += inStyle ? `<![CDATA[${sanitizeCss(tok.slice(9, -3), report)}]]>` : tok;
      continue;
    }
    if (/^<!doctype/i.test(tok)) {
      report.removedDoctype = true;
      continue;
    }
    if (tok.startsWith('<?')) {
      if (/^<\?xml\s/i.test(tok) && skip === 0) out += tok;
      else report.removedElements++;
      continue;
    }
    const closing = tok.startsWith('</');
    const selfClosing = /\/>$/.test(tok);
    const name = /^<\/?([A-Za-z_][\w:.-]*)/.exec(tok)![1]!;
    const lname = localName(name);
    if (skip > 0) {
      if (lname === skipName) {
        if (closing) skip--;
        else if (!selfClosing) skip++;
      }
      continue;
    }
    // SMIL can re-point an href at run time (<set attributeName="href" to="http://…">).
    const animatesHref = /^(set|animate)$/.test(lname) && /attributeName\s*=\s*["']?[\w:]*href\b/i.test(tok);
    if (DROP_ELEMENTS.has(lname) || animatesHref) {
      report.removedElements++;
      if (!closing && !selfClosing) {
        skip = 1;
        skipName = lname;
      }
      continue;
    }
    if (lname === 'style') inStyle = !closing && !selfClosing;
    if (closing) {
      out += `</${name}>`;
      continue;
    }
    const attrs: string[] = [];
    const body = tok.slice(1 + name.length, selfClosing ? -2 : -1);
    ATTR.lastIndex = 0;
    for (let a = ATTR.exec(body); a; a = ATTR.exec(body)) {
      const an = a[1]!;
      const raw = a[2];
      const value = raw === undefined ? '' : /^["']/.test(raw) ? raw.slice(1, -1) : raw;
      const ln = localName(an);
      if (ln.startsWith('on')) {
        report.removedAttributes++;
        continue;
      }
      if (ln === 'href' || ln === 'src' || an.toLowerCase() === 'xml:base') {
        if (!isSafeRef(decodeEntities(value))) {
          report.removedReferences++;
          continue;
        }
      }
      let v = value;
      if (/url\s*\(|@import|\\/i.test(decodeEntities(v))) v = escapeAttr(sanitizeCss(decodeEntities(v), report));
      attrs.push(`${an}="${v.replace(/"/g, '&quot;')}"`);
    }
    out += `<${name}${attrs.length ? ' ' + attrs.join(' ') : ''}${selfClosing ? '/>' : '>'}`;
  }
  const tail = svg.slice(last);
  if (/<[A-Za-z_!?/]/.test(tail)) report.malformed = true;
  if (skip === 0) out += tail;
  return { svg: out, report };
}

function decodeEntities(s: string): string {
  return s
    .replace(/&#x([0-9a-f]+);?/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);?/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&(lt|gt|quot|apos|amp);/g, (_, n: string) => ({ lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' })[n]!);
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;');
}
