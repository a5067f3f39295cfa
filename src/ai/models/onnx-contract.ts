/**
 * The imported ONNX networks (LaMa, DDColor, scratch detection, GFPGAN, the denoiser) come from the
 * admin's archive, not from a pinned download, so a file with another interface (another export, a
 * 256-px LaMa, a model for another task) is a likely mistake. It fails as FEATURE_INCOMPATIBLE naming
 * the file, the interface kiln feeds and what the file did, with the import that replaces it, rather
 * than as an internal error or, worse, a wrong picture.
 */
import { KilnError } from '../../core/errors.js';
import type { OrtSession, OrtTensor } from '../runtimes/ort-types.js';

export interface Contract {
  /** The file in the bundle, e.g. `lama-fp32.onnx`. */
  file: string;
  bundle: string;
  /** The interface kiln feeds, as docs/AI.md states it. */
  expected: string;
}

/** onnxruntime's refusals of feeds that do not fit the graph (names, rank, sizes, element type). */
const FEED_REFUSED =
  /invalid dimensions|invalid rank|invalid feed|input name|missing in 'feeds'|unexpected input data type|data type mismatch/i;

export function interfaceMismatch(c: Contract, got: string): KilnError {
  return new KilnError(
    'FEATURE_INCOMPATIBLE',
    `The imported ${c.file} (${c.bundle} bundle) does not have the interface kiln feeds it (${c.expected}): ${got}. ` +
      'Import an export with that interface: `kiln features import FILE`, or as an admin POST /api/v1/admin/features/import (docs/AI.md).',
    { reason: 'model-interface', details: { file: c.file, bundle: c.bundle, expected: c.expected, got } },
  );
}

/** The session takes exactly `count` inputs (checked before anything is fed). */
export function checkInputCount(session: OrtSession, count: number, c: Contract): void {
  if (session.inputNames.length !== count)
    throw interfaceMismatch(c, `it takes ${session.inputNames.length} input(s) (${session.inputNames.join(', ')}), not ${count}`);
}

/** session.run, with the runtime's refusal of the feeds reported as interfaceMismatch. */
export async function runImported(session: OrtSession, feeds: Record<string, OrtTensor>, c: Contract): Promise<Record<string, OrtTensor>> {
  try {
    return await session.run(feeds);
  } catch (e) {
    const message = (e as Error)?.message ?? String(e);
    if (FEED_REFUSED.test(message)) throw interfaceMismatch(c, message.split('\n')[0]!.trim());
    throw e;
  }
}

/** The first output, which must have exactly `dims`. */
export function firstOutput(out: Record<string, OrtTensor>, session: OrtSession, dims: readonly number[], c: Contract): OrtTensor {
  const o = out[session.outputNames[0]!]!;
  if (o.dims.length !== dims.length || o.dims.some((d, i) => d !== dims[i]))
    throw interfaceMismatch(c, `it answered ${o.dims.join('×')} where ${dims.join('×')} was expected`);
  return o;
}
