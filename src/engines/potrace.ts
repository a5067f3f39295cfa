/**
 * Potrace (Debian package): traces a 1-bit bitmap into smooth vector outlines. kiln writes the bitmap
 * as binary PBM itself, so potrace never has to guess a format, and reads the SVG from stdout.
 */
import { exec } from '../core/process.js';
import { requireEngine } from './registry.js';

export interface PotraceOptions {
  /** Suppress speckles of up to this many pixels (potrace --turdsize). */
  turdsize: number;
  /** Corner threshold: 0 = polygon (all corners sharp), 1 = potrace default, up to 1.3334 = no corners. */
  alphamax: number;
  /** potrace's curve optimization (joining Bézier segments); off for a literal trace. */
  opticurve: boolean;
  signal?: AbortSignal;
}

/** Binary PBM (P4): rows padded to whole bytes, bit set = black. `black(i)` says whether pixel i is ink. */
export function toPbm(width: number, height: number, black: (i: number) => boolean): Buffer {
  const header = Buffer.from(`P4\n${width} ${height}\n`, 'ascii');
  const rowBytes = Math.ceil(width / 8);
  const body = Buffer.alloc(rowBytes * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) if (black(y * width + x)) body[y * rowBytes + (x >> 3)]! |= 0x80 >> (x & 7);
  return Buffer.concat([header, body]);
}

/** Runs potrace on a PBM and returns the SVG text (units: one pixel per SVG user unit). */
export async function potraceSvg(pbm: Buffer, o: PotraceOptions): Promise<string> {
  const bin = await requireEngine('potrace');
  const args = [
    '--svg',
    '--output',
    '-',
    '--turdsize',
    String(o.turdsize),
    '--alphamax',
    String(o.alphamax),
    '--resolution',
    '72',
    '--flat',
  ];
  if (!o.opticurve) args.push('--longcurve');
  const r = await exec(bin, [...args, '-'], { input: pbm, signal: o.signal, timeoutMs: 300_000, failCode: 'UNSUPPORTED_INPUT' });
  return r.stdout;
}
