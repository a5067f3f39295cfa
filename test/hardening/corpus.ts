/**
 * The hostile-input corpus, generated here (small files only): truncated and wrong-magic files of every
 * input type, pixel bombs, a ZIP bomb in an office file, SVG with script / external entities / XXE /
 * entity expansion, encrypted and malformed PDFs, polyglots.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import yazl from 'yazl';
import { vipsEnv } from '../../src/engines/sharp.js';
import { pngChunk, tiffBomb } from '../helpers/header-bombs.js';
import { halfClip } from '../helpers/media.js';
import { readZip } from '../helpers/zip.js';

export interface Hostile {
  /** What it is, for failure messages. */
  label: string;
  /** The name it is uploaded under. */
  name: string;
  data: Buffer;
}

/**
 * A real decompression bomb: 1-bit greyscale, w × h pixels of zeros, a few tens of KB on disk. Decoded
 * to 8 bits per pixel it needs w × h bytes per band.
 */
function pngBomb(w: number, h: number, bitDepth: number, rows = h): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(w, 0);
  ihdr.writeUInt32BE(h, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = 0; // greyscale
  const rowBytes = 1 + Math.ceil((w * bitDepth) / 8);
  const idat = deflateSync(Buffer.alloc(rowBytes * rows), { level: 9 });
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * An APNG bomb: a w × h greyscale canvas of zeros as the first frame, then `frames - 1` frames of one
 * pixel each. Every frame decodes at the full canvas size; the file holds a few hundred KB.
 */
export function apngBomb(w: number, h: number, frames: number): Buffer {
  let seq = 0;
  const u32 = (...n: number[]) => Buffer.concat(n.map((x) => Buffer.from([x >>> 24, (x >>> 16) & 255, (x >>> 8) & 255, x & 255])));
  const ihdr = Buffer.concat([u32(w, h), Buffer.from([8, 0, 0, 0, 0])]);
  // sequence, width, height, x, y, delay 1/100 s, dispose none, blend source
  const fctl = (fw: number, fh: number) => pngChunk('fcTL', Buffer.concat([u32(seq++, fw, fh, 0, 0), Buffer.from([0, 1, 0, 100, 0, 0])]));
  const pixel = deflateSync(Buffer.alloc(2));
  const parts = [
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('acTL', u32(frames, 0)),
    fctl(w, h),
    pngChunk('IDAT', deflateSync(Buffer.alloc((1 + w) * h), { level: 9 })),
  ];
  for (let i = 1; i < frames; i++) parts.push(fctl(1, 1), pngChunk('fdAT', Buffer.concat([u32(seq++), pixel])));
  parts.push(pngChunk('IEND', Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** A GIF whose logical screen and frame declare 65535 × 65535 with one pixel of data. */
function gifBomb(): Buffer {
  const b: number[] = [...Buffer.from('GIF89a'), 0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
  b.push(0x2c, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b);
  return Buffer.from(b);
}

/** Patches the frame size of a baseline JPEG (its SOF0 marker) to 65500 × 65500. */
function jpegBomb(jpeg: Buffer): Buffer {
  const out = Buffer.from(jpeg);
  const i = out.indexOf(Buffer.from([0xff, 0xc0]));
  out.writeUInt16BE(65500, i + 5);
  out.writeUInt16BE(65500, i + 7);
  return out;
}

/** A ZIP of `entries` in order; an OpenDocument's `mimetype` entry is stored, as the format asks. */
function zipOf(entries: [string, Buffer][]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const z = new yazl.ZipFile();
    for (const [name, data] of entries) z.addBuffer(data, name, { compress: name !== 'mimetype' });
    z.end();
    const chunks: Buffer[] = [];
    z.outputStream.on('data', (c: Buffer) => chunks.push(c));
    z.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    z.outputStream.on('error', reject);
  });
}

const ffmpeg = (args: string[]) => execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);
const half = (b: Buffer) => b.subarray(0, Math.floor(b.length / 2));
const junk = (n: number, seed = 7) => {
  const b = Buffer.alloc(n);
  let x = seed;
  for (let i = 0; i < n; i++) b[i] = (x = (x * 1103515245 + 12345) & 0x7fffffff) >> 16;
  return b;
};

/**
 * A real office file (a valid ZIP) with its main part cut in half: the archive opens and sniffs as what it
 * is, and the office engine meets broken XML where the document should be.
 */
async function cutPart(zip: Buffer, part: string): Promise<Buffer> {
  const entries = [...(await readZip(zip))];
  if (!entries.some(([name]) => name === part)) throw new Error(`no ${part} in the archive`);
  return zipOf(entries.map(([name, data]) => [name, name === part ? half(data) : data]));
}

/**
 * A Photoshop file cut in the middle of its layer data. ImageMagick stores the picture twice, in its layer
 * and as the merged image after it: half of the file still held the whole layer and decoded intact.
 */
export function cutInLayers(psd: Buffer): Buffer {
  let at = 26; // the header; then the colour mode data, the image resources, the layers, each with its length
  at += 4 + psd.readUInt32BE(at);
  at += 4 + psd.readUInt32BE(at);
  return psd.subarray(0, at + 4 + Math.floor(psd.readUInt32BE(at) / 2));
}

/**
 * A minimal OpenDocument (mimetype, manifest, content.xml holding `body`) whose content.xml is cut in the
 * middle of the body. Made by hand: LibreOffice would take seconds to write a real one.
 */
function cutOdf(mime: string, body: string): Promise<Buffer> {
  const ns = [
    'office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"',
    'table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"',
    'text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"',
    'draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0"',
    'svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0"',
  ];
  const content = `<?xml version="1.0" encoding="UTF-8"?><office:document-content ${ns.map((n) => `xmlns:${n}`).join(' ')} office:version="1.2"><office:body>${body}</office:body></office:document-content>`;
  const manifest =
    '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.2">' +
    `<manifest:file-entry manifest:full-path="/" manifest:media-type="${mime}"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`;
  return zipOf([
    ['mimetype', Buffer.from(mime)],
    ['META-INF/manifest.xml', Buffer.from(manifest)],
    ['content.xml', half(Buffer.from(content))],
  ]);
}

export async function buildCorpus(dir: string): Promise<Hostile[]> {
  const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366cc' } })
    .png()
    .toBuffer();
  const jpg = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#cc6633' } })
    .jpeg()
    .toBuffer();
  const mp4 = path.join(dir, 'v.mp4');
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x48:rate=10:duration=1', '-pix_fmt', 'yuv420p', mp4]);
  const wav = path.join(dir, 'a.wav');
  ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=0.5', wav]);
  const mp3 = path.join(dir, 'a.mp3');
  ffmpeg(['-i', wav, mp3]);
  const damaged = await damagedOfMoreTypes(dir);
  const pdfDoc = await PDFDocument.create();
  pdfDoc.addPage([200, 200]).drawText('hostile', { x: 20, y: 100 });
  const pdf = Buffer.from(await pdfDoc.save());
  writeFileSync(path.join(dir, 'p.pdf'), pdf);
  execFileSync('qpdf', ['--encrypt', 'user-pw', 'owner-pw', '256', '--', path.join(dir, 'p.pdf'), path.join(dir, 'enc.pdf')]);
  const huge = await PDFDocument.create();
  huge.addPage([14400, 14400]);
  const wavBuf = readFileSync(wav);
  const wavLie = Buffer.from(wavBuf);
  wavLie.writeUInt32LE(0xfffffff0, 4);
  wavLie.writeUInt32LE(0xffffff00, 40);
  const docxXml = Buffer.from(
    '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
      '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
  );
  // 100 MB of spaces inside the document part: a ~100 KB upload.
  const docBody = Buffer.alloc(100 * 1024 * 1024, 0x20);
  const zipBomb = await zipOf([
    ['[Content_Types].xml', docxXml],
    ['word/document.xml', docBody],
  ]);
  const laughs =
    '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY a "lollollollollollollollollollol">' +
    Array.from({ length: 9 }, (_, i) => `<!ENTITY ${String.fromCharCode(98 + i)} "${`&${String.fromCharCode(97 + i)};`.repeat(10)}">`).join(
      '',
    ) +
    ']><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><text>&j;</text></svg>';
  return [
    { label: 'truncated PNG', name: 'cut.png', data: half(png) },
    { label: 'truncated JPEG', name: 'cut.jpg', data: half(jpg) },
    { label: 'random bytes named .png', name: 'noise.png', data: junk(4000) },
    { label: 'PNG pixel bomb 16000² (1-bit zeros, decodes to 256 MB)', name: 'bomb.png', data: pngBomb(16000, 16000, 1) },
    { label: 'PNG declaring 100000² with 1 row of data', name: 'huge.png', data: pngBomb(100000, 100000, 1, 1) },
    { label: 'GIF declaring 65535²', name: 'bomb.gif', data: gifBomb() },
    { label: 'JPEG declaring 65500²', name: 'bomb.jpg', data: jpegBomb(jpg) },
    {
      label: 'SVG with script and event handlers',
      name: 'script.svg',
      data: Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40" onload="alert(1)"><script>alert(2)</script>' +
          '<rect width="40" height="40" fill="red"/><foreignObject><iframe xmlns="http://www.w3.org/1999/xhtml" src="javascript:alert(3)"/></foreignObject></svg>',
      ),
    },
    {
      label: 'SVG with an external entity (XXE)',
      name: 'xxe.svg',
      data: Buffer.from(
        '<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>' +
          '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><text y="20">&x;</text></svg>',
      ),
    },
    {
      label: 'SVG with external image and stylesheet references',
      name: 'external.svg',
      data: Buffer.from(
        '<?xml-stylesheet href="http://127.0.0.1:1/x.css"?><svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="40" height="40">' +
          '<image xlink:href="file:///etc/passwd" width="40" height="40"/><image href="http://169.254.169.254/latest/meta-data/" width="4" height="4"/></svg>',
      ),
    },
    { label: 'SVG entity expansion (billion laughs)', name: 'laughs.svg', data: Buffer.from(laughs) },
    {
      label: 'SVG declaring 10⁸ × 10⁸ pixels',
      name: 'vast.svg',
      data: Buffer.from(
        '<svg xmlns="http://www.w3.org/2000/svg" width="100000000" height="100000000"><rect width="10" height="10"/></svg>',
      ),
    },
    { label: 'truncated MP4', name: 'cut.mp4', data: half(readFileSync(mp4)) },
    { label: 'random bytes named .mp4', name: 'noise.mp4', data: junk(6000, 11) },
    { label: 'truncated WAV', name: 'cut.wav', data: half(wavBuf) },
    { label: 'WAV whose header claims 4 GB', name: 'liar.wav', data: wavLie },
    { label: 'truncated MP3', name: 'cut.mp3', data: half(readFileSync(mp3)) },
    {
      label: 'malformed PDF',
      name: 'bad.pdf',
      data: Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog /Pages 9 0 R >>\nendobj\ntrailer << /Root 1 0 R >>\n%%EOF'),
    },
    { label: 'truncated PDF', name: 'cut.pdf', data: half(pdf) },
    { label: 'encrypted PDF (user password)', name: 'locked.pdf', data: readFileSync(path.join(dir, 'enc.pdf')) },
    { label: 'PDF with a 200 × 200 inch page', name: 'vast.pdf', data: Buffer.from(await huge.save()) },
    { label: 'DOCX ZIP bomb (100 MB part)', name: 'bomb.docx', data: zipBomb },
    { label: 'random bytes named .docx', name: 'noise.docx', data: junk(3000, 5) },
    { label: 'random bytes named .xlsx', name: 'noise.xlsx', data: junk(3000, 9) },
    { label: 'binary junk named .srt', name: 'noise.srt', data: junk(2000, 3) },
    {
      label: 'SRT with absurd timestamps',
      name: 'absurd.srt',
      data: Buffer.from('1\n99999999:59:59,999 --> 99999999:59:59,999\nhello\n\n-1\n00:00:01,000 --> 00:00:00,000\n\n'),
    },
    { label: 'polyglot: JPEG then a ZIP', name: 'poly.jpg', data: Buffer.concat([jpg, await zipOf([['a.txt', Buffer.from('x')]])]) },
    { label: 'polyglot: PDF named .png', name: 'pdf.png', data: pdf },
    { label: 'polyglot: PNG named .pdf', name: 'png.pdf', data: png },
    { label: 'empty file', name: 'empty.png', data: Buffer.alloc(0) },
    ...damaged,
  ];
}

/**
 * A damaged file of every other input type a preset takes (WebP, HEIC, TIFF, PSD, EPS, MOV, MKV, AVI,
 * WebM, AAC, Ogg, FLAC, XLSX, ODS, PPTX, ODP), so every engine behind a preset meets hostile input: real
 * files of a tiny picture or 1 s of 64 × 48 video or sine, cut in half, and a few made broken by hand.
 */
async function damagedOfMoreTypes(dir: string): Promise<Hostile[]> {
  const at = (name: string) => path.join(dir, name);
  // A busy test picture, so that half of each file ends inside its pixel data, not in a header.
  ffmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x48', '-frames:v', '1', at('pic.png')]);
  const pic = sharp(at('pic.png'));
  const webp = await pic.clone().webp().toBuffer();
  // sharp writes the IFD after the pixel data: half of the file keeps a header pointing past its end.
  const tiff = await pic.clone().tiff().toBuffer();
  // sharp has no HEVC encoder; the Debian vips CLI (libheif) has.
  execFileSync('vips', ['copy', at('pic.png'), at('pic.heic')], { env: vipsEnv() });
  execFileSync('/usr/bin/convert', [at('pic.png'), `psd:${at('pic.psd')}`]);
  // 1 s of sine in `name`'s format, cut in half.
  const sound = (name: string, extra: string[] = []) => {
    ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', ...extra, at(name)]);
    return half(readFileSync(at(name)));
  };
  const { default: ExcelJS } = await import('exceljs');
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet('Sheet1');
  ws.addRows([
    ['fruit', 'count'],
    ['apple', 3],
    ['pear', 5],
  ]);
  const xlsx = Buffer.from(await wb.xlsx.writeBuffer());
  execFileSync('pandoc', ['-o', at('deck.pptx')], { input: '# One\n\nfirst slide\n\n# Two\n\n- a\n- b\n' });
  const cell = (v: string) => `<table:table-cell office:value-type="string"><text:p>${v}</text:p></table:table-cell>`;
  return [
    { label: 'truncated WebP', name: 'cut.webp', data: half(webp) },
    { label: 'truncated TIFF (its IFD offset points past the end)', name: 'cut.tif', data: half(tiff) },
    // The IFD is whole; every strip it lists runs past the end of the file.
    { label: 'TIFF whose strips run past the end', name: 'strips.tif', data: tiffBomb(64, 48).subarray(0, -32) },
    { label: 'truncated HEIC', name: 'cut.heic', data: half(readFileSync(at('pic.heic'))) },
    { label: 'PSD cut in its layer data', name: 'cut.psd', data: cutInLayers(readFileSync(at('pic.psd'))) },
    {
      // Undefined operators and unbalanced syntax only: nothing in it names a file or a device.
      label: 'EPS of PostScript junk',
      name: 'junk.eps',
      data: Buffer.from(
        '%!PS-Adobe-3.0 EPSF-3.0\n%%BoundingBox: 0 0 40 30\n%%EndComments\n1 0 0 setrgbcolor 0 0 40 30 rectfill\n' +
          'kiln-no-such-operator 12 { dup mul } ] >> (unterminated string\n',
      ),
    },
    // Index (moov) first, so the cut falls in the media data; cut.mp4 covers a missing index.
    { label: 'truncated MOV', name: 'cut.mov', data: halfClip(dir, 'v.mov', ['-movflags', '+faststart']) },
    { label: 'truncated MKV', name: 'cut.mkv', data: halfClip(dir, 'v.mkv') },
    { label: 'truncated AVI', name: 'cut.avi', data: halfClip(dir, 'v.avi') },
    { label: 'truncated WebM', name: 'cut.webm', data: halfClip(dir, 'v.webm') },
    { label: 'truncated AAC (ADTS)', name: 'cut.aac', data: sound('a.aac', ['-c:a', 'aac', '-f', 'adts']) },
    { label: 'truncated Ogg Vorbis', name: 'cut.ogg', data: sound('a.ogg', ['-c:a', 'libvorbis']) },
    { label: 'truncated FLAC', name: 'cut.flac', data: sound('a.flac') },
    { label: 'XLSX with its workbook part cut in half', name: 'cut.xlsx', data: await cutPart(xlsx, 'xl/workbook.xml') },
    {
      label: 'PPTX with its presentation part cut in half',
      name: 'cut.pptx',
      data: await cutPart(readFileSync(at('deck.pptx')), 'ppt/presentation.xml'),
    },
    {
      label: 'ODS with its content cut in half',
      name: 'cut.ods',
      data: await cutOdf(
        'application/vnd.oasis.opendocument.spreadsheet',
        `<office:spreadsheet><table:table table:name="Sheet1">${['fruit,count', 'apple,3', 'pear,5']
          .map((r) => `<table:table-row>${r.split(',').map(cell).join('')}</table:table-row>`)
          .join('')}</table:table></office:spreadsheet>`,
      ),
    },
    {
      label: 'ODP with its content cut in half',
      name: 'cut.odp',
      data: await cutOdf(
        'application/vnd.oasis.opendocument.presentation',
        '<office:presentation><draw:page draw:name="one"><draw:frame svg:x="1cm" svg:y="1cm" svg:width="10cm" svg:height="2cm">' +
          '<draw:text-box><text:p>first slide</text:p></draw:text-box></draw:frame></draw:page>' +
          '<draw:page draw:name="two"><draw:frame svg:x="1cm" svg:y="1cm" svg:width="10cm" svg:height="2cm"><draw:text-box><text:p>second</text:p></draw:text-box></draw:frame></draw:page></office:presentation>',
      ),
    },
  ];
}
