/**
 * The floor of the CLI rows: the same resize as `kiln resize … --width 800` (orientation applied, fit
 * inside, baseline JPEG quality 90, outputs written whole) with nothing but node and sharp, started as
 * a program like kiln is. What kiln costs above it is kiln's own; what it costs above the engine's own
 * command line (vipsthumbnail) is mostly this program's too.
 *
 *   node sharp-alone.js <out-dir> <in.jpg>…   (one file: as `kiln resize`; several: cores + 1 at a time, as its batch)
 */
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';

const [outDir, ...files] = process.argv.slice(2);
if (!outDir || files.length === 0) throw new Error('usage: sharp-alone <out-dir> <in.jpg>…');
sharp.concurrency(0);
sharp.cache(false);
let next = 0;
const worker = async () => {
  for (let i = next++; i < files.length; i = next++) {
    const f = files[i]!;
    await sharp(f, { failOn: 'error' })
      .autoOrient()
      .resize({ width: 800, fit: 'inside' })
      .jpeg({ quality: 90, progressive: false })
      .toFile(path.join(outDir, path.basename(f)));
  }
};
await Promise.all(Array.from({ length: Math.min(files.length, os.availableParallelism() + 1) }, worker));
