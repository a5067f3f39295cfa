/** TF.js weights (a weights manifest and its binary shards) read from a bundle into named tensors. */
import { readFile } from 'node:fs/promises';
import { KilnError } from '../../core/errors.js';
import type { ModelLoadContext } from '../model.js';
import type { NamedTensorMap, Tensor, TfModule, WeightsManifestGroup } from '../runtimes/tfjs-types.js';

export async function loadTfWeights(tf: TfModule, ctx: ModelLoadContext, manifestFile: string): Promise<NamedTensorMap> {
  const groups = JSON.parse(await readFile(ctx.file(manifestFile), 'utf8')) as WeightsManifestGroup[];
  const out: NamedTensorMap = {};
  for (const g of groups) {
    const shards = await Promise.all(g.paths.map((p) => readFile(ctx.file(p))));
    const all = Buffer.concat(shards);
    const buf = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength) as ArrayBuffer;
    Object.assign(out, tf.io.decodeWeights(buf, g.weights));
  }
  return out;
}

/** A named weight, or a clear failure naming it (a bundle whose files do not match the network). */
export function weight(map: NamedTensorMap, name: string, model: string): Tensor {
  const t = map[name];
  if (!t) throw new KilnError('INTERNAL', `${model}: weight ${name} is missing from the bundle.`);
  return t;
}
