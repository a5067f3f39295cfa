/**
 * SVG sanitizing before librsvg renders an upload: the document is parsed by a maintained XML parser
 * (@xmldom/xmldom, which never fetches or expands DTD entities) and written out again from an
 * allow-list, in the manner of DOMPurify's SVG profile:
 *
 * - elements: SVG shapes, text, paint servers, structure and filter primitives, in the SVG namespace
 *   only; everything else (script, foreignObject, animation such as set/animate, other namespaces) is
 *   dropped with its content;
 * - attributes: presentation and geometry attributes by exact name, in no namespace (plus xlink:href
 *   and xml:space/xml:lang); event handlers and anything unknown are dropped;
 * - references: href and url() may only name a fragment of the same document (#id) or a raster
 *   data: image; CSS (style attributes and <style>) is re-emitted from its decoded form with @import,
 *   external url(), expression() and bindings removed;
 * - the DOCTYPE, entity declarations, processing instructions and comments are not copied; CDATA is
 *   copied as escaped text.
 *
 * Output is serialized here from the parsed tree, never the input text patched: what the renderer
 * reads is exactly what the allow-list let through.
 */
import { DOMParser } from '@xmldom/xmldom';
import { ATTRIBUTES, ELEMENTS } from './svg-allowlist.js';

export interface SanitizeReport {
  removedElements: number;
  removedAttributes: number;
  removedReferences: number;
  removedDoctype: boolean;
  /** Markup the parser could not read: the caller must refuse the file rather than pass it on. */
  malformed: boolean;
}

const SVG_NS = 'http://www.w3.org/2000/svg';
const XLINK_NS = 'http://www.w3.org/1999/xlink';
const XML_NS = 'http://www.w3.org/XML/1998/namespace';

/** Attributes whose value is a reference (checked like href) rather than passed through. */
const HREF = new Set(['href']);
const SAFE_DATA = /^data:image\/(png|jpe?g|gif|webp|avif|bmp)[;,]/i;

/** What a reference may name: a fragment of this document or a raster data: image. */
function isSafeRef(v: string, allowData: boolean): boolean {
  // Browsers and renderers ignore ASCII whitespace and control characters inside URLs (java\tscript:).
  const t = v.replace(/[\u0000-\u0020\u007f]+/g, '');
  return /^#[\w.:-]*$/.test(t) || (allowData && SAFE_DATA.test(t));
}

/** Decodes CSS escapes (\75 rl, \:) so nothing hides from the checks, and drops comments. */
function decodeCss(css: string): string {
  return css
    .replace(/\/\*[\s\S]*?(\*\/|$)/g, ' ')
    .replace(/\\([0-9a-f]{1,6})\s?/gi, (_m, hex: string) => {
      const cp = Number.parseInt(hex, 16);
      return cp > 0 && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) ? String.fromCodePoint(cp) : '\ufffd';
    })
    .replace(/\\(.)/g, '$1')
    .replace(/\\$/, '');
}

/** CSS text with every external reference and active construct removed; counts what it removed. */
export function sanitizeCss(css: string, report: SanitizeReport): string {
  let out = decodeCss(css);
  out = out.replace(/@import[^;]*(;|$)/gi, () => {
    report.removedReferences++;
    return '';
  });
  out = out.replace(/url\s*\(\s*(["']?)([^"')]*)\1\s*\)/gi, (m, _q: string, ref: string) => {
    if (isSafeRef(ref, true)) return m;
    report.removedReferences++;
    return 'none';
  });
  // Anything that could still fetch or run: url( forms the pattern above did not read, image-set(),
  // src(), expression(), behaviours and bindings. The replacement is invalid CSS the renderer skips.
  out = out.replace(/\burl\s*\((?!\s*(["']?)(#[\w.:-]*|data:image\/(png|jpe?g|gif|webp|avif|bmp)[;,][^"')]*)\1\s*\))/gi, () => {
    report.removedReferences++;
    return 'x-removed(';
  });
  out = out.replace(
    /\b(image-set|src|expression|image|element|paint)\s*\(|behaviou?r\s*:|-moz-binding|javascript\s*:|@font-face|@namespace/gi,
    () => {
      report.removedReferences++;
      return 'x-removed ';
    },
  );
  // A quoted address left anywhere else (an image-set() list, a property the renderer may read as a
  // URL): only fragments and raster data: images stay.
  out = out.replace(/(["'])([^"']*?(?:[a-z][\w+.-]*:|\/\/)[^"']*)\1/gi, (m, _q: string, text: string) => {
    if (isSafeRef(text, true)) return m;
    report.removedReferences++;
    return '""';
  });
  return out;
}

function escapeText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttr(s: string): string {
  return escapeText(s)
    .replace(/"/g, '&quot;')
    .replace(/[\t\n\r]/g, (c) => `&#${c.charCodeAt(0)};`);
}

interface XNode {
  nodeType: number;
  nodeName: string;
  nodeValue: string | null;
  localName?: string | null;
  namespaceURI?: string | null;
  childNodes: ArrayLike<XNode>;
  attributes?: ArrayLike<{ name: string; localName: string; namespaceURI: string | null; prefix: string | null; value: string }>;
}

export function sanitizeSvg(svg: string): { svg: string; report: SanitizeReport } {
  const report: SanitizeReport = {
    removedElements: 0,
    removedAttributes: 0,
    removedReferences: 0,
    removedDoctype: false,
    malformed: false,
  };
  let broken = false;
  const parse = (text: string) => {
    const parser = new DOMParser({
      // Undeclared entities (xmldom never expands DTD entities) stay as literal text, escaped below;
      // every other error means markup the parser had to guess at.
      errorHandler: (level: string, message: string) => {
        if (level !== 'warning' && !/entity not found/i.test(message)) broken = true;
      },
    } as unknown as ConstructorParameters<typeof DOMParser>[0]);
    try {
      return parser.parseFromString(text, 'image/svg+xml') as unknown as { documentElement: XNode | null; childNodes: ArrayLike<XNode> };
    } catch {
      broken = true;
      return undefined;
    }
  };
  let doc = parse(svg);
  // Hand-written files often omit the namespace; renderers take them as SVG, so do the same.
  if (!broken && doc?.documentElement?.localName === 'svg' && !doc.documentElement.namespaceURI)
    doc = parse(svg.replace(/<svg(?=[\s/>])/, `<svg xmlns="${SVG_NS}"`));
  const root = doc?.documentElement;
  if (broken || !root || root.localName !== 'svg' || root.namespaceURI !== SVG_NS) {
    report.malformed = true;
    return { svg: '', report };
  }
  for (let i = 0; i < doc!.childNodes.length; i++) {
    const n = doc!.childNodes[i]!;
    if (n.nodeType === 10) report.removedDoctype = true;
  }
  if (/<!DOCTYPE/i.test(svg)) report.removedDoctype = true;

  let usesXlink = false;
  const element = (el: XNode): string => {
    const name = el.localName ?? el.nodeName;
    if (el.namespaceURI !== SVG_NS || !ELEMENTS.has(name.toLowerCase())) {
      report.removedElements++;
      return '';
    }
    let attrs = '';
    for (let i = 0; i < (el.attributes?.length ?? 0); i++) {
      const a = el.attributes![i]!;
      // Namespace declarations are written once on the root instead.
      if (a.name === 'xmlns' || a.prefix === 'xmlns') continue;
      const local = a.localName ?? a.name;
      if (a.namespaceURI === XML_NS && (local === 'space' || local === 'lang')) {
        attrs += ` xml:${local}="${escapeAttr(a.value)}"`;
        continue;
      }
      const isHref = local === 'href' && (a.namespaceURI === XLINK_NS || !a.namespaceURI);
      if ((a.namespaceURI && !isHref) || !ATTRIBUTES.has(local.toLowerCase())) {
        report.removedAttributes++;
        continue;
      }
      let value = a.value;
      if (HREF.has(local)) {
        // Links (<a>) go nowhere; images and fe/pattern/use references may name a fragment or a raster data: image.
        if (!isSafeRef(value, name !== 'a')) {
          report.removedReferences++;
          continue;
        }
        if (a.namespaceURI === XLINK_NS) {
          usesXlink = true;
          attrs += ` xlink:href="${escapeAttr(value)}"`;
          continue;
        }
      } else if (local === 'style' || /url\s*\(|\\/i.test(value)) {
        value = sanitizeCss(value, report);
      }
      attrs += ` ${local}="${escapeAttr(value)}"`;
    }
    let body = '';
    const style = name === 'style';
    for (let i = 0; i < el.childNodes.length; i++) {
      const c = el.childNodes[i]!;
      if (c.nodeType === 1) body += element(c);
      else if (c.nodeType === 3 || c.nodeType === 4)
        body += escapeText(style ? sanitizeCss(c.nodeValue ?? '', report) : (c.nodeValue ?? ''));
      else if (c.nodeType === 7) report.removedElements++;
    }
    return body ? `<${name}${attrs}>${body}</${name}>` : `<${name}${attrs}/>`;
  };
  for (let i = 0; i < doc!.childNodes.length; i++) if (doc!.childNodes[i]!.nodeType === 7) report.removedElements++;
  // The namespace declarations go on the root once the whole tree is known (xlink only when used).
  const out = element(root).slice('<svg'.length);
  const xmlns = ` xmlns="${SVG_NS}"${usesXlink ? ` xmlns:xlink="${XLINK_NS}"` : ''}`;
  return { svg: `<?xml version="1.0" encoding="UTF-8"?>\n<svg${xmlns}${out}`, report };
}
