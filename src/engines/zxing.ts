/**
 * Barcode reading: zxing-cpp compiled to WASM (zxing-wasm), with Debian's zbarimg as a second engine
 * for what zxing misses. The WASM binary is read from the package on disk: left to itself the
 * library would fetch it from a CDN, and kiln must work offline.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { KilnError } from '../core/errors.js';
import { exec } from '../core/process.js';

export interface Point {
  x: number;
  y: number;
}

export interface DecodedCode {
  format: string;
  text: string;
  position: { topLeft: Point; topRight: Point; bottomRight: Point; bottomLeft: Point };
  engine: 'zxing' | 'zbar';
}

export interface RgbaImage {
  data: Uint8Array;
  width: number;
  height: number;
}

type ZxingReader = typeof import('zxing-wasm/reader');
let reader: Promise<ZxingReader> | undefined;

function loadReader(): Promise<ZxingReader> {
  reader ??= (async () => {
    const mod = await import('zxing-wasm/reader');
    const wasmPath = createRequire(import.meta.url).resolve('zxing-wasm/reader/zxing_reader.wasm');
    const bytes = await readFile(wasmPath);
    const wasmBinary = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    await mod.prepareZXingModule({ overrides: { wasmBinary }, fireImmediately: true });
    return mod;
  })().catch((e: unknown) => {
    reader = undefined;
    throw new KilnError('ENGINE_MISSING', `The zxing-wasm barcode reader could not load: ${(e as Error).message}`);
  });
  return reader;
}

/** Every code zxing finds in an RGBA image. */
export async function readWithZxing(img: RgbaImage): Promise<DecodedCode[]> {
  const z = await loadReader();
  const results = await z.readBarcodes(
    {
      data: new Uint8ClampedArray(img.data.buffer, img.data.byteOffset, img.data.byteLength),
      width: img.width,
      height: img.height,
      colorSpace: 'srgb',
    } as unknown as ImageData,
    { formats: [], tryHarder: true, tryRotate: true, tryInvert: true, tryDownscale: true, maxNumberOfSymbols: 255 },
  );
  return results
    .filter((r) => r.isValid)
    .map((r) => ({
      format: r.format,
      text: r.text,
      position: {
        topLeft: pt(r.position.topLeft),
        topRight: pt(r.position.topRight),
        bottomRight: pt(r.position.bottomRight),
        bottomLeft: pt(r.position.bottomLeft),
      },
      engine: 'zxing' as const,
    }));
}

function pt(p: Point): Point {
  return { x: p.x, y: p.y };
}

const ZBAR_FORMATS: Record<string, string> = {
  'QR-Code': 'QRCode',
  'EAN-13': 'EAN-13',
  'EAN-8': 'EAN-8',
  'UPC-A': 'UPC-A',
  'UPC-E': 'UPC-E',
  'CODE-128': 'Code128',
  'CODE-39': 'Code39',
  'CODE-93': 'Code93',
  'I2/5': 'ITF',
  Codabar: 'Codabar',
  DataBar: 'DataBar',
  'DataBar-Exp': 'DataBarExpanded',
  PDF417: 'PDF417',
};

/**
 * zbarimg on an image file. Its XML output carries no coordinates for 1-D codes in this version, so
 * the position is the whole image when zbar is the engine that found the code.
 */
export async function readWithZbar(file: string, size: { width: number; height: number }, signal?: AbortSignal): Promise<DecodedCode[]> {
  // Exit 4 means "no symbol found", which is an answer, not a failure.
  const r = await exec('zbarimg', ['--xml', '-q', file], { signal, timeoutMs: 60_000, okCodes: [0, 4] }).catch((e: unknown) => {
    if (e instanceof KilnError && e.code === 'ENGINE_MISSING') return undefined;
    throw e;
  });
  if (!r || r.code === 4) return [];
  const codes: DecodedCode[] = [];
  const re = /<symbol type=['"]([^'"]+)['"][^>]*>[\s\S]*?<data(?: format=['"]base64['"])?[^>]*><!\[CDATA\[([\s\S]*?)\]\]><\/data>/g;
  const whole = {
    topLeft: { x: 0, y: 0 },
    topRight: { x: size.width, y: 0 },
    bottomRight: { x: size.width, y: size.height },
    bottomLeft: { x: 0, y: size.height },
  };
  for (let m = re.exec(r.stdout); m; m = re.exec(r.stdout)) {
    const isB64 = /format=['"]base64['"]/.test(m[0]);
    codes.push({
      format: ZBAR_FORMATS[m[1]!] ?? m[1]!,
      text: isB64 ? Buffer.from(m[2]!, 'base64').toString('utf8') : m[2]!,
      position: whole,
      engine: 'zbar',
    });
  }
  return codes;
}
