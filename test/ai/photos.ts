/**
 * Real photos of people for the AI suites: the demo pictures of @vladmandic/face-api (MIT), taken
 * from its pinned npm tarball through the same verified, cached download the installer uses.
 */
import path from 'node:path';
import sharp from 'sharp';
import { extractTarball } from '../../src/ai/install/npm.js';
import { cachedTarball } from './install-helper.js';

const FACE_API = {
  name: '@vladmandic/face-api',
  version: '1.7.15',
  integrity: 'sha512-WDMmK3CfNLo8jylWqMoQgf4nIst3M0fzx1dnac96wv/dvMTN4DxC/Pq1DGtduDk1lktCamQ3MIDXFnvrdHTXDw==',
  size: 12_677_476,
};

/** demo/sample<n>.jpg resized to `width` px wide, as a JPEG in `dir`. */
export async function samplePhoto(dir: string, n: number, width = 640): Promise<string> {
  const tgz = await cachedTarball(FACE_API);
  const x = path.join(dir, 'face-api');
  await extractTarball(tgz, x, [`package/demo/sample${n}.jpg`]);
  const out = path.join(dir, `sample${n}-${width}.jpg`);
  await sharp(path.join(x, 'demo', `sample${n}.jpg`))
    .resize(width)
    .jpeg({ quality: 90 })
    .toFile(out);
  return out;
}
