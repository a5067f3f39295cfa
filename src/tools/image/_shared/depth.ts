/**
 * 16 bits per channel in, 8 out: the layout, watermark and per-pixel tools draw on 8-bit canvases and
 * RGBA buffers, so a 16-bit scan leaves them with a quarter of its tonal range even where the output
 * format (PNG, TIFF) holds 16 bits. runTool checks every image run once here and names the loss in
 * data.warnings rather than letting it pass silently; the formats that keep it say nothing.
 */
import { readHead } from '../../../core/read-head.js';
import type { InputFile, OutputFile } from '../../../core/tool.js';
import { getSharp, MAX_INPUT_PIXELS } from '../../../engines/sharp.js';

/** Formats whose 16-bit samples sharp reads and kiln writes back (writeImage's keepDepthAndGrey). */
const DEEP_KINDS = new Set(['png', 'tiff']);

/** Bits per sample of a PNG (IHDR) or TIFF (from sharp's header read); undefined for anything else. */
async function bitsPerSample(file: { path: string; bytes?: Buffer }, kind: string): Promise<number | undefined> {
  if (kind === 'png') {
    const head = file.bytes ?? (await readHead(file.path, 25).catch(() => Buffer.alloc(0)));
    return head.length >= 25 && head.toString('latin1', 12, 16) === 'IHDR' ? head[24] : undefined;
  }
  const sharp = await getSharp();
  const meta = await sharp(file.bytes ?? file.path, { limitInputPixels: MAX_INPUT_PIXELS })
    .metadata()
    .catch(() => undefined);
  return meta?.depth === 'ushort' ? 16 : meta?.depth === 'uchar' ? 8 : undefined;
}

/** Whether any input may hold 16-bit samples: only then does the check below read a header. */
export function mayBeDeep(inputs: InputFile[]): boolean {
  return inputs.some((f) => DEEP_KINDS.has(f.type?.ext ?? ''));
}

/** The warning for a run whose 16-bit input came out as an 8-bit PNG or TIFF, else undefined. */
export async function depthCutWarning(tool: string, inputs: InputFile[], output: OutputFile): Promise<string | undefined> {
  const ext = output.name.toLowerCase().match(/\.(png|tiff?)$/)?.[1];
  const outKind = ext === 'tif' ? 'tiff' : ext;
  if (!outKind) return undefined;
  let deep: InputFile | undefined;
  for (const f of inputs) {
    const kind = f.type?.ext;
    if (kind && DEEP_KINDS.has(kind) && (await bitsPerSample(f, kind)) === 16) {
      deep = f;
      break;
    }
  }
  if (!deep || (await bitsPerSample(output, outKind)) !== 8) return undefined;
  return `${deep.name} has 16 bits per channel; ${tool} wrote ${output.name} with 8.`;
}
