import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import yauzl from 'yauzl';
import yazl from 'yazl';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { KilnError } from '../../../src/core/errors.js';
import { chromiumPid, keepChromiumWarm, shutdownChromium } from '../../../src/engines/chromium.js';
import { tempDir } from '../../helpers/fixtures.js';
import { pdfPages, pdfText, runDoc } from './doc-helpers.js';
import { kiln } from '../../helpers/cli.js';

const dir = tempDir();
keepChromiumWarm();
after(() => shutdownChromium());

const run = (tool: string, file: string, settings: Record<string, unknown> = {}, keep?: string) => runDoc(dir, tool, file, settings, keep);

/** Names of the entries of a ZIP in order. */
function zipEntries(p: string): Promise<{ names: string[]; read: (n: string) => Promise<string>; firstCompressed: boolean }> {
  return new Promise((resolve, reject) =>
    yauzl.open(p, { lazyEntries: false, autoClose: false }, (err, zip) => {
      if (err) return reject(err);
      const entries: yauzl.Entry[] = [];
      zip.on('entry', (e: yauzl.Entry) => entries.push(e));
      zip.on('end', () =>
        resolve({
          names: entries.map((e) => e.fileName),
          firstCompressed: entries[0]!.compressionMethod !== 0,
          read: (n) =>
            new Promise((res, rej) => {
              const e = entries.find((x) => x.fileName === n);
              if (!e) return rej(new Error(`no ${n}`));
              zip.openReadStream(e, (er, s) => {
                if (er) return rej(er);
                const parts: Buffer[] = [];
                s.on('data', (b: Buffer) => parts.push(b));
                s.on('end', () => res(Buffer.concat(parts).toString('utf8')));
              });
            }),
        }),
      );
    }),
  );
}

/** A ZIP of the given entries, the first stored (mimetype of an EPUB). */
async function zipFile(p: string, entries: [string, string | Buffer][]): Promise<string> {
  const z = new yazl.ZipFile();
  for (const [i, [n, b]] of entries.entries()) z.addBuffer(Buffer.from(b), n, { compress: i > 0 });
  z.end();
  const ws = createWriteStream(p);
  z.outputStream.pipe(ws);
  await once(ws, 'close');
  return p;
}

const MARKDOWN = `# Kiln notes

Some *intro* text with a [link](javascript:alert(1)) and <script>alert(2)</script>.

| Glaze | Cone |
|-------|-----:|
| Celadon | 10 |
| Tenmoku | 9 |

\`\`\`python
def fire(cone):
    return cone * 100
\`\`\`
`;

describe('HTML, Markdown and EPUB tools (Chromium + pandoc)', () => {
  let server: Server;
  let hits: string[] = [];
  let origin = '';
  before(async () => {
    server = createServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('x');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  it('html-to-pdf renders the page and no request leaves the machine', async () => {
    hits = [];
    const html = path.join(dir, 'page.html');
    writeFileSync(
      html,
      `<!DOCTYPE html><html><head><title>t</title>
<link rel="stylesheet" href="${origin}/style.css"><link rel="prefetch" href="${origin}/prefetch">
<script src="${origin}/script.js"></script>
<style>@import url("${origin}/import.css"); body { background: url("${origin}/bg.png"); } @font-face { font-family: x; src: url("${origin}/font.woff"); }</style>
</head><body><h1>Offline page</h1><p>Rendered without network.</p>
<img src="${origin}/img.png"><iframe src="${origin}/frame"></iframe><img src="file:///etc/hostname">
<script>fetch("${origin}/fetch").catch(()=>{}); new Image().src="${origin}/pixel"; try { new WebSocket("ws://127.0.0.1:${origin.split(':').pop()}/ws"); } catch (e) {} navigator.sendBeacon && navigator.sendBeacon("${origin}/beacon", "x");</script>
</body></html>`,
    );
    const pdf = await run('html-to-pdf', html);
    assert.equal(pdfPages(pdf), 1);
    assert.match(pdfText(pdf), /Offline page[\s\S]*Rendered without network\./);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(hits, [], 'the test server saw no request');
  });

  it('html-to-pdf follows the encoding the page declares (Windows-1252, Shift_JIS), else the one of its bytes', async () => {
    const cp1252 = (s: string) => Buffer.from([...s].map((c) => ({ '“': 0x93, '”': 0x94, '€': 0x80 })[c] ?? c.charCodeAt(0)));
    // 東京タワー in Shift_JIS (CP932), written out so that no encoder is needed.
    const tokyoSjis = Buffer.from([0x93, 0x8c, 0x8b, 0x9e, 0x83, 0x5e, 0x83, 0x8f, 0x81, 0x5b]);
    const pages: [string, Buffer, RegExp][] = [
      [
        'meta-1252.html',
        cp1252('<!DOCTYPE html><html><head><meta charset="windows-1252"></head><body><p>Café “crème” €5</p></body></html>'),
        /Café “crème” €5/,
      ],
      [
        'meta-sjis.html',
        Buffer.concat([
          Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS"></head><body><p>'),
          tokyoSjis,
          Buffer.from('</p></body></html>'),
        ]),
        /東京タワー/,
      ],
      ['bare-1252.html', cp1252('<!DOCTYPE html><html><body><p>Café “crème” €5</p></body></html>'), /Café “crème” €5/],
      ['bare-utf8.html', Buffer.from('<!DOCTYPE html><html><body><p>Café “crème” €5 東京</p></body></html>'), /Café “crème” €5\s+東京/],
    ];
    for (const [name, bytes, want] of pages) {
      writeFileSync(path.join(dir, name), bytes);
      const text = pdfText(await run('html-to-pdf', path.join(dir, name), {}, `${name}.pdf`));
      assert.match(text, want, name);
      assert.doesNotMatch(text, /\uFFFD/, name);
    }
  });

  it('markdown-to-html writes styled, highlighted, safe HTML with a table', async () => {
    const md = path.join(dir, 'notes.md');
    writeFileSync(md, MARKDOWN);
    const html = readFileSync(await run('markdown-to-html', md), 'utf8');
    assert.match(html, /<table[\s\S]*<td[^>]*>Celadon<\/td>[\s\S]*<\/table>/);
    assert.match(html, /class="sourceCode python"/);
    assert.match(html, /<span class="kw">def<\/span>/);
    assert.match(html, /<style>[\s\S]*border-collapse/);
    assert.doesNotMatch(html, /<script>alert/);
    assert.doesNotMatch(html, /javascript:/);
    assert.match(html, /Content-Security-Policy/);
  });

  it('markdown-to-pdf renders the table and code without network', async () => {
    hits = [];
    const md = path.join(dir, 'remote.md');
    writeFileSync(md, MARKDOWN + `\n![remote](${origin}/remote.png)\n`);
    const pdf = await run('markdown-to-pdf', md);
    const text = pdfText(pdf);
    assert.match(text, /Celadon\s+10/);
    assert.match(text, /def fire\(cone\):/);
    assert.deepEqual(hits, []);
  });

  it('markdown-to-docx keeps headings, the table and the code', async () => {
    const md = path.join(dir, 'doc.md');
    // A local file and a URL as images: neither may be read or fetched into the DOCX.
    writeFileSync(md, MARKDOWN + `\n![secret](/etc/hostname)\n\n![remote](${origin}/img.png)\n`);
    hits = [];
    const docx = await run('markdown-to-docx', md);
    const z = await zipEntries(docx);
    assert.deepEqual(
      z.names.filter((n) => n.startsWith('word/media/')),
      [],
    );
    assert.deepEqual(hits, []);
    const xml = await z.read('word/document.xml');
    assert.match(xml, /<w:pStyle w:val="Heading1" ?\/>[\s\S]*Kiln notes/);
    assert.match(xml, /\[image: secret\]/);
    assert.match(xml, /<w:tbl>[\s\S]*Tenmoku[\s\S]*<\/w:tbl>/);
    assert.match(xml, /fire/);
  });

  let epub = '';
  it('to-epub builds a valid EPUB structure from Markdown', async () => {
    const md = path.join(dir, 'book.md');
    writeFileSync(md, `---\ntitle: The Kiln Book\n---\n\n# Chapter One\n\nClay and fire.\n\n# Chapter Two\n\nGlaze and ash.\n`);
    epub = await run('to-epub', md, {}, 'book.epub');
    const raw = readFileSync(epub);
    assert.equal(raw.subarray(30, 38).toString(), 'mimetype', 'mimetype is the first entry');
    const z = await zipEntries(epub);
    assert.equal(z.names[0], 'mimetype');
    assert.equal(z.firstCompressed, false, 'mimetype is stored');
    assert.equal(await z.read('mimetype'), 'application/epub+zip');
    const container = await z.read('META-INF/container.xml');
    const opfPath = /full-path="([^"]+)"/.exec(container)![1]!;
    const opf = await z.read(opfPath);
    assert.match(opf, /<dc:title[^>]*>The Kiln Book<\/dc:title>/);
    assert.match(opf, /<spine/);
    const chapters = z.names.filter((n) => /ch\d+\.xhtml$/.test(n));
    assert.ok(chapters.length >= 2, `chapters: ${z.names.join(', ')}`);
  });

  it('to-epub from text and from DOCX-less HTML', async () => {
    const txt = path.join(dir, 'story.txt');
    writeFileSync(txt, 'Once upon a time.\n\nThe end & <done>.\n');
    const out = await run('to-epub', txt, {}, 'story.epub');
    const z = await zipEntries(out);
    const opf = await z.read(/full-path="([^"]+)"/.exec(await z.read('META-INF/container.xml'))![1]!);
    assert.match(opf, /<dc:title[^>]*>story<\/dc:title>/);
    const body = (await Promise.all(z.names.filter((n) => n.endsWith('.xhtml')).map((n) => z.read(n)))).join('\n');
    assert.match(body, /The end &amp; &lt;done&gt;\./);
  });

  it('markdown-to-html and to-epub read UTF-16 and Windows-1252 text, not only UTF-8', async () => {
    const text = 'Café “crème” € naïve';
    const utf16 = (s: string) => Buffer.from(`\uFEFF${s}`, 'utf16le');
    const cp1252 = (s: string) => Buffer.from([...s].map((c) => ({ '“': 0x93, '”': 0x94, '€': 0x80 })[c] ?? c.charCodeAt(0)));
    for (const [name, bytes] of [
      ['u16.md', utf16(`# ${text}\n`)],
      ['cp1252.md', cp1252(`# ${text}\n`)],
    ] as const) {
      writeFileSync(path.join(dir, name), bytes);
      const html = readFileSync(await run('markdown-to-html', path.join(dir, name), {}, `${name}.html`), 'utf8');
      assert.match(html, /<h1[^>]*>Café “crème” € naïve<\/h1>/, name);
    }
    for (const [name, bytes] of [
      ['u16.txt', utf16(`${text}\n`)],
      ['cp1252.txt', cp1252(`${text}\n`)],
    ] as const) {
      writeFileSync(path.join(dir, name), bytes);
      const z = await zipEntries(await run('to-epub', path.join(dir, name), {}, `${name}.epub`));
      const body = (await Promise.all(z.names.filter((n) => n.endsWith('.xhtml')).map((n) => z.read(n)))).join('\n');
      assert.match(body, /<p>Café “crème” € naïve<\/p>/, name);
    }
  });

  it('epub-convert to html, md, docx and pdf', async () => {
    // An EPUB made by pandoc itself, independent of to-epub.
    const md = path.join(dir, 'pandoc-src.md');
    writeFileSync(md, '---\ntitle: Pandoc Book\n---\n\n# Part A\n\nAlpha text.\n\n# Part B\n\nBeta text.\n');
    const src = path.join(dir, 'pandoc.epub');
    execFileSync('pandoc', ['-o', src, md]);
    const html = readFileSync(await run('epub-convert', src, { format: 'html' }, 'p.html'), 'utf8');
    assert.match(html, /Alpha text\.[\s\S]*Beta text\./);
    const mdOut = readFileSync(await run('epub-convert', src, { format: 'md' }, 'p.md'), 'utf8');
    assert.match(mdOut, /# Part A[\s\S]*Alpha text\./);
    const docx = await zipEntries(await run('epub-convert', src, { format: 'docx' }, 'p.docx'));
    assert.match(await docx.read('word/document.xml'), /Beta text\./);
    const pdf = await run('epub-convert', src, { format: 'pdf' }, 'p.pdf');
    assert.match(pdfText(pdf), /Alpha text\.[\s\S]*Beta text\./);
  });

  it('epub-convert to html/pdf: own images inlined, remote ones become text, raw HTML never inlines a local file', async () => {
    const secret = path.join(dir, 'secret.txt');
    writeFileSync(secret, 'TOP-SECRET-TOKEN-42\n');
    const png = await sharp({ create: { width: 4, height: 4, channels: 3, background: '#0a0' } })
      .png()
      .toBuffer();
    const chapter = `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>c</title></head><body>
<h1>Chapter</h1><p>Own <img src="images/dot.png" alt="dot"/> remote <img src="${origin}/remote.png" alt="far"/> end.</p>
<iframe src="file://${secret}"></iframe><video src="${secret}" poster="${origin}/poster.png"></video></body></html>`;
    const epubPath = await zipFile(path.join(dir, 'hostile.epub'), [
      ['mimetype', 'application/epub+zip'],
      [
        'META-INF/container.xml',
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
      ],
      [
        'OEBPS/content.opf',
        '<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:identifier id="id">x</dc:identifier><dc:title>Hostile</dc:title><dc:language>en</dc:language></metadata><manifest><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/><item id="i1" href="images/dot.png" media-type="image/png"/></manifest><spine><itemref idref="c1"/></spine></package>',
      ],
      ['OEBPS/c1.xhtml', chapter],
      ['OEBPS/images/dot.png', png],
    ]);
    hits = [];
    const html = readFileSync(await run('epub-convert', epubPath, { format: 'html' }, 'hostile.html'), 'utf8');
    assert.match(html, /Own <img src="data:image\/png;base64,/);
    assert.match(html, /remote\s+<em>\[image: far\]<\/em> end\./);
    const inlined = [...html.matchAll(/base64,([A-Za-z0-9+/=]+)/g)].map((m) => Buffer.from(m[1]!, 'base64').toString('latin1')).join('');
    assert.doesNotMatch(html + inlined, /TOP-SECRET-TOKEN/);
    assert.match(pdfText(await run('epub-convert', epubPath, { format: 'pdf' }, 'hostile.pdf')), /remote\s+\[image: far\]\s+end\./);
    assert.deepEqual(hits, []);
  });

  it('epub-convert rejects a corrupt EPUB with UNSUPPORTED_INPUT', async () => {
    const good = readFileSync(epub);
    const bad = path.join(dir, 'bad.epub');
    writeFileSync(bad, good.subarray(0, 200));
    await assert.rejects(run('epub-convert', bad, { format: 'md' }), (e: KilnError) => e.code === 'UNSUPPORTED_INPUT');
  });

  it('markdown-to-pdf works from the CLI and the process exits', async () => {
    const md = path.join(dir, 'cli.md');
    writeFileSync(md, '# From the CLI\n\n| a | b |\n|---|---|\n| 1 | 2 |\n');
    const out = path.join(dir, 'cli.pdf');
    const r = await kiln(['markdown-to-pdf', md, '-o', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(pdfText(out), /From the CLI/);
  });

  it('a CLI run ends when its work does, not after the idle time of the browser, and leaves no browser profile', async () => {
    // The browser starts while pandoc works (prepareChromium) and closes once the run is over (beforeExit).
    const tmp = tempDir('kiln-cli-chromium-');
    const env = { TMPDIR: tmp, KILN_CHROMIUM_IDLE_MS: '300000' };
    const md = path.join(dir, 'quick.md');
    writeFileSync(md, '# Quick exit\n');
    const out = path.join(dir, 'quick.pdf');
    let t0 = Date.now();
    const ok = await kiln(['markdown-to-pdf', md, '-o', out], { env });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(pdfText(out), /Quick exit/);
    assert.ok(Date.now() - t0 < 120_000, `took ${Date.now() - t0} ms with a 300-s idle time`);
    // pandoc refuses the document after the browser was started for it: that browser goes too.
    const bad = path.join(dir, 'bad-yaml.md');
    writeFileSync(bad, '---\ntitle: [unclosed\n---\n\n# Never\n');
    t0 = Date.now();
    const failed = await kiln(['markdown-to-pdf', bad, '-o', path.join(dir, 'never.pdf')], { env });
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /pandoc failed/);
    assert.ok(Date.now() - t0 < 120_000, `took ${Date.now() - t0} ms with a 300-s idle time`);
    // Playwright's profile directory is removed when the browser closes; node's compile cache may stay.
    assert.deepEqual(
      readdirSync(tmp).filter((f) => f !== 'node-compile-cache'),
      [],
    );
  });

  it('relaunches Chromium after it was killed', async () => {
    const pid = await chromiumPid();
    assert.ok(pid, 'browser is running');
    process.kill(pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));
    const html = path.join(dir, 'again.html');
    writeFileSync(html, '<!DOCTYPE html><html><body><p>After restart</p></body></html>');
    assert.match(pdfText(await run('html-to-pdf', html)), /After restart/);
    const pid2 = await chromiumPid();
    assert.ok(pid2 && pid2 !== pid);
  });
});
