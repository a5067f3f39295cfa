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
import { pngChunk } from '../helpers/header-bombs.js';

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

function zipOf(entries: [string, Buffer][]): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const z = new yazl.ZipFile();
    for (const [name, data] of entries) z.addBuffer(data, name, { compress: true });
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
  ];
}
