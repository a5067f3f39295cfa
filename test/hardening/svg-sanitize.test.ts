/**
 * Issue #16 item 11: the SVG sanitizer against a corpus of known bypass tricks (mixed case, entities,
 * namespaces and prefixes, CDATA, javascript: with whitespace and entities, external <use>/<image>/
 * xlink:href, set/animate rewriting href, CSS url()/@import/expression with escapes, XXE and entity
 * bombs). Each case is also mutated (case flips, whitespace, quote styles) so near-variants are tried.
 * Every output must re-parse as SVG and hold no active or external construct; harmless content
 * (shapes, fragment references, raster data: images, text) must survive.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DOMParser } from '@xmldom/xmldom';
import { sanitizeSvg } from '../../src/tools/image/_shared/svg-sanitize.js';

const EXT = 'http://evil.test/x';
const svg = (body: string, rootAttrs = '') =>
  `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"${rootAttrs}>${body}</svg>`;

const CORPUS: [string, string][] = [
  ['script', svg('<script>alert(1)</script>')],
  ['script mixed case', svg('<ScRiPt>alert(1)</ScRiPt>')],
  ['script in a prefix', '<s:svg xmlns:s="http://www.w3.org/2000/svg"><s:script>alert(1)</s:script><s:rect width="1" height="1"/></s:svg>'],
  ['script CDATA', svg('<script><![CDATA[alert(1)]]></script>')],
  ['script xlink', svg(`<script xlink:href="${EXT}/a.js"/>`)],
  ['html namespace script', svg('<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script>')],
  ['default namespace switch', svg('<g xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></g>')],
  ['foreignObject', svg(`<foreignObject width="5" height="5"><iframe xmlns="http://www.w3.org/1999/xhtml" src="${EXT}"/></foreignObject>`)],
  ['foreignobject lower', svg('<foreignobject><body xmlns="http://www.w3.org/1999/xhtml" onload="alert(1)"/></foreignobject>')],
  ['onload root', svg('<rect width="1" height="1"/>', ' onload="alert(1)"')],
  ['onLoad mixed case', svg('<rect width="1" height="1" onLoad="alert(1)" ONCLICK="alert(2)"/>')],
  [
    'handler with namespace',
    svg('<rect width="1" height="1" xlink:onclick="alert(1)" ev:event="click" xmlns:ev="http://www.w3.org/2001/xml-events"/>'),
  ],
  ['javascript href', svg('<a href="javascript:alert(1)"><rect width="1" height="1"/></a>')],
  ['javascript entity', svg('<a href="jav&#x61;script:alert(1)"><rect width="1" height="1"/></a>')],
  ['javascript whitespace', svg('<a href=" java\tscript:alert(1)"><rect width="1" height="1"/></a>')],
  ['javascript newline entity', svg('<a xlink:href="java&#10;script:alert(1)"><rect width="1" height="1"/></a>')],
  ['javascript control char', svg('<a href="&#1;javascript:alert(1)"><rect width="1" height="1"/></a>')],
  ['data html href', svg('<a href="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg=="><rect width="1" height="1"/></a>')],
  ['use external', svg(`<use href="${EXT}/sprite.svg#i"/>`)],
  ['use xlink external', svg(`<use xlink:href="${EXT}/sprite.svg#i"/>`)],
  ['use data svg', svg('<use href="data:image/svg+xml;base64,PHN2Zy8+#x"/>')],
  ['image external', svg(`<image href="${EXT}/a.png" width="5" height="5"/>`)],
  ['image file', svg('<image xlink:href="file:///etc/passwd" width="5" height="5"/>')],
  ['image protocol-relative', svg('<image href="//evil.test/a.png" width="5" height="5"/>')],
  ['feImage external', svg(`<filter id="f"><feImage href="${EXT}/a.png"/></filter>`)],
  ['pattern href external', svg(`<pattern id="p" href="${EXT}/p.svg#q"/>`)],
  ['set to href', svg(`<image href="#a" width="5" height="5"><set attributeName="href" to="${EXT}/a.png"/></image>`)],
  ['animate href', svg(`<a href="#x"><animate attributeName="href" values="javascript:alert(1)"/><rect width="1" height="1"/></a>`)],
  [
    'animateTransform',
    svg('<rect width="1" height="1"><animateTransform attributeName="transform" type="rotate" from="0" to="90" dur="1s"/></rect>'),
  ],
  ['handler element', svg('<handler type="application/ecmascript">alert(1)</handler>')],
  ['style import', svg(`<style>@import url(${EXT}/a.css); rect { fill: red }</style>`)],
  ['style import string', svg(`<style>@import "${EXT}/a.css";</style>`)],
  ['style url', svg(`<style>rect { fill: url(${EXT}/p.svg#p) }</style>`)],
  ['style url escaped', svg(`<style>rect { fill: u\\72l(${EXT}/p.svg#p) }</style>`)],
  ['style url escaped 2', svg(`<style>rect { background: \\75 \\72 \\6c (${EXT}/p.png) }</style>`)],
  ['style url comment', svg(`<style>rect { fill: url/**/(${EXT}/p.svg#p) }</style>`)],
  ['style CDATA', svg(`<style><![CDATA[rect { fill: url("${EXT}/p.svg#p") }]]></style>`)],
  ['style expression', svg('<style>rect { width: expression(alert(1)) }</style>')],
  ['style binding', svg(`<style>rect { -moz-binding: url(${EXT}/x.xml#b); behavior: url(${EXT}/x.htc) }</style>`)],
  ['style font-face', svg(`<style>@font-face { font-family: x; src: url(${EXT}/f.woff) }</style>`)],
  ['style image-set', svg(`<style>rect { background: image-set("${EXT}/a.png" 1x) }</style>`)],
  ['style attribute url', svg(`<rect width="1" height="1" style="fill: url(${EXT}/s.svg#f)"/>`)],
  ['style attribute escaped', svg(`<rect width="1" height="1" style="fill: \\75rl(${EXT}/s.svg#f)"/>`)],
  ['fill url', svg(`<rect width="1" height="1" fill="url(${EXT}/f.svg#g)"/>`)],
  ['fill url entity', svg(`<rect width="1" height="1" fill="&#117;rl(${EXT}/f.svg#g)"/>`)],
  ['filter url', svg(`<rect width="1" height="1" filter="url('${EXT}/f.svg#f')"/>`)],
  [
    'mask and clip url',
    svg(`<rect width="1" height="1" mask="url(${EXT}/m#m)" clip-path="url(${EXT}/c#c)" marker-end="url(${EXT}/k#k)"/>`),
  ],
  ['XXE system', `<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>${svg('<text>&xxe;</text>')}`],
  ['XXE parameter', `<!DOCTYPE svg [<!ENTITY % p SYSTEM "${EXT}/p.dtd"> %p;]>${svg('<rect width="1" height="1"/>')}`],
  ['XXE public', `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "${EXT}/svg11.dtd">${svg('<rect width="1" height="1"/>')}`],
  [
    'billion laughs',
    `<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>${svg('<text>&c;&c;&c;</text>')}`,
  ],
  ['stylesheet PI', `<?xml-stylesheet type="text/css" href="${EXT}/a.css"?>${svg('<rect width="1" height="1"/>')}`],
  ['stylesheet PI inside', svg(`<?xml-stylesheet href="${EXT}/a.css"?><rect width="1" height="1"/>`)],
  ['comment hiding markup', svg('<!--<script>alert(1)</script>--><rect width="1" height="1"/>')],
  ['iframe embed object', svg(`<iframe src="${EXT}"/><embed src="${EXT}"/><object data="${EXT}"/>`)],
  ['xml:base', svg('<image href="a.png" width="5" height="5"/>', ` xml:base="${EXT}/"`)],
  ['relative href', svg('<image href="../../etc/passwd" width="5" height="5"/>')],
  ['nested svg script', svg('<svg><script>alert(1)</script></svg>')],
  ['text content looks like markup', svg('<text>&lt;script&gt;alert(1)&lt;/script&gt;</text>')],
];

/** Case flips, extra whitespace and quote swaps of one case: near-variants a deny-list might miss. */
function mutations(s: string): string[] {
  const out = [s];
  out.push(s.replace(/(<\/?)([a-z])/g, (_m, a: string, c: string) => a + c.toUpperCase()));
  out.push(s.replace(/ (\w[\w:-]*)="/g, ' $1 = "'));
  out.push(s.replace(/="([^"']*)"/g, "='$1'"));
  out.push(s.replace(/javascript/gi, 'JaVaScRiPt').replace(/url\(/g, 'URL('));
  out.push(s.replace(/http:/g, 'HTTP:').replace(/file:/g, 'FILE:'));
  return out;
}

/** Everything that must never survive, checked on the re-parsed output (entities decoded). */
function dangers(clean: string): string[] {
  const found: string[] = [];
  if (/<!DOCTYPE|<!ENTITY|<\?xml-stylesheet/i.test(clean)) found.push('doctype/entity/PI');
  const doc = new DOMParser().parseFromString(clean, 'image/svg+xml');
  const walk = (n: {
    nodeType: number;
    localName?: string;
    namespaceURI?: string | null;
    attributes?: ArrayLike<{ localName: string; value: string; namespaceURI: string | null }>;
    childNodes: ArrayLike<unknown>;
    textContent?: string | null;
  }) => {
    if (n.nodeType === 1) {
      const name = (n.localName ?? '').toLowerCase();
      if (n.namespaceURI !== 'http://www.w3.org/2000/svg') found.push(`element in ${n.namespaceURI}`);
      if (/^(script|foreignobject|iframe|embed|object|handler|set|animate|animatetransform|animatemotion)$/.test(name))
        found.push(`<${name}>`);
      for (let i = 0; i < (n.attributes?.length ?? 0); i++) {
        const a = n.attributes![i]!;
        const v = a.value.replace(/[\u0000-\u0020]+/g, '').toLowerCase();
        if (/^on/i.test(a.localName)) found.push(`handler ${a.localName}`);
        if (a.localName === 'base') found.push('xml:base');
        if (a.localName === 'href' && !/^#|^data:image\/(png|jpe?g|gif|webp|avif|bmp)[;,]/.test(v)) found.push(`href ${a.value}`);
        if (/javascript:|evil\.test|file:|expression\(|-moz-binding|behaviou?r:|@import/.test(v)) found.push(`${a.localName}=${a.value}`);
      }
      if (name === 'style' && /evil\.test|@import|expression\(|javascript:/i.test(n.textContent ?? ''))
        found.push(`style ${n.textContent}`);
    }
    for (let i = 0; i < (n.childNodes?.length ?? 0); i++) walk(n.childNodes[i] as never);
  };
  walk(doc.documentElement as never);
  if (/evil\.test|etc\/passwd/i.test(clean)) found.push('external address in output');
  return found;
}

describe('SVG sanitizer (allow-list on a parsed tree)', () => {
  it('removes every construct of the bypass corpus and its mutations', () => {
    const failures: string[] = [];
    let tried = 0;
    for (const [name, input] of CORPUS) {
      for (const variant of mutations(input)) {
        tried++;
        const { svg: clean, report } = sanitizeSvg(variant);
        // Refusing markup the parser cannot read is a safe outcome too.
        if (report.malformed) {
          assert.equal(clean, '');
          continue;
        }
        const bad = dangers(clean);
        if (bad.length) failures.push(`${name}: ${bad.join('; ')}\n  in:  ${variant}\n  out: ${clean}`);
      }
    }
    assert.ok(tried > 300, `${tried} variants`);
    assert.deepEqual(failures, []);
  });

  it('the corpus cases are really removed, not refused wholesale', () => {
    const refused = CORPUS.filter(([, input]) => sanitizeSvg(input).report.malformed).map(([n]) => n);
    assert.deepEqual(refused, [], 'well-formed hostile documents are cleaned, not refused');
    const { svg: clean, report } = sanitizeSvg(CORPUS.find(([n]) => n === 'XXE system')![1]);
    assert.ok(report.removedDoctype);
    assert.ok(!clean.includes('passwd'));
    assert.ok(sanitizeSvg(CORPUS.find(([n]) => n === 'billion laughs')![1]).svg.length < 2000, 'entities are never expanded');
  });

  it('keeps harmless content: shapes, gradients by fragment, raster data: images, text, CSS with local url()', () => {
    const png = 'data:image/png;base64,iVBORw0KGgo=';
    const input = svg(
      `<defs><linearGradient id="g"><stop offset="0" stop-color="#f00"/><stop offset="1" stop-color="#00f"/></linearGradient></defs>` +
        `<style>.a { fill: url(#g); stroke: #000 }</style>` +
        `<rect class="a" x="1" y="1" width="8" height="8" fill="url(#g)" transform="rotate(5)"/>` +
        `<use xlink:href="#g"/><image href="${png}" width="2" height="2"/>` +
        `<text x="1" y="9" font-family="sans-serif">A &amp; B &lt; C</text>`,
      ' viewBox="0 0 10 10" preserveAspectRatio="xMidYMid meet"',
    );
    const { svg: clean, report } = sanitizeSvg(input);
    assert.equal(report.malformed, false);
    for (const keep of [
      'viewBox="0 0 10 10"',
      'preserveAspectRatio',
      'linearGradient',
      'fill="url(#g)"',
      'fill: url(#g)',
      png,
      'xlink:href="#g"',
      'A &amp; B &lt; C',
      'transform="rotate(5)"',
    ])
      assert.ok(clean.includes(keep), `keeps ${keep}: ${clean}`);
    assert.deepEqual(report, { removedElements: 0, removedAttributes: 0, removedReferences: 0, removedDoctype: false, malformed: false });
    // Without the namespace declaration, as hand-written files often are: read as SVG all the same.
    const bare = sanitizeSvg('<svg width="4" height="4"><rect width="4" height="4" fill="#0f0"/><script>x()</script></svg>');
    assert.equal(bare.report.malformed, false);
    assert.match(
      bare.svg,
      /<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="4" height="4"><rect width="4" height="4" fill="#0f0"\/><\/svg>/,
    );
  });

  it('refuses what is not a well-formed SVG document', () => {
    for (const bad of ['<svg xmlns="http://www.w3.org/2000/svg"><rect</svg>', '<html><body/></html>', ''])
      assert.equal(sanitizeSvg(bad).report.malformed, true, bad);
  });
});
