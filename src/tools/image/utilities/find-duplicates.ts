import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { hammingDistance, perceptualHash } from '../_shared/phash.js';
import { checkAbort } from '../_shared/cancel.js';
import { openInput } from '../_shared/decode.js';
import { visibleSize } from '../../../engines/sharp.js';

export default defineTool({
  id: 'find-duplicates',
  section: 'image',
  group: 'utilities',
  summary: 'Group duplicate and near-duplicate images by perceptual hash.',
  description:
    'Each image gets a 64-bit DCT perceptual hash (32×32 grayscale, lowest 8×8 frequencies against their median). Images whose hashes are at most ' +
    'threshold bits apart are linked; linked images form a group. Each group lists every member’s distance to the group’s best file (most pixels, then largest file).',
  input: { kind: 'files', accept: ['image/*'], min: 2, max: 500 },
  settings: z.object({
    threshold: z.int().min(0).max(20).default(8).describe('Maximum perceptual-hash distance (bits of 64) to count as a duplicate.'),
  }),
  output: 'JSON: groups of duplicates with distances, hashes, skipped files',
  examples: ['*.jpg --threshold 6 --json'],
  async run(ctx, { files }, s) {
    interface Item {
      index: number;
      name: string;
      hash: bigint;
      pixels: number;
      size: number;
      width: number;
      height: number;
    }
    const items: Item[] = [];
    const skipped: { name: string; reason: string }[] = [];
    for (const [index, f] of files.entries()) {
      checkAbort(ctx.signal);
      try {
        const img = await openInput(f, ctx.workDir);
        // The size a person sees (EXIF orientation applied), as compare and info's display size report it.
        const { width, height } = visibleSize(await img.metadata());
        const hash = await perceptualHash(img);
        items.push({ index, name: f.name, hash, pixels: width * height, size: f.size, width, height });
      } catch (e) {
        skipped.push({ name: f.name, reason: `could not be decoded: ${(e as Error).message.split('\n')[0]}` });
      }
      ctx.progress((80 * (index + 1)) / files.length, 'hashing');
    }
    // Union-find over all pairs within the threshold: near-duplicates chain into one group.
    const parent = items.map((_, i) => i);
    const find = (i: number): number => (parent[i] === i ? i : (parent[i] = find(parent[i]!)));
    const pairs: { a: string; b: string; distance: number }[] = [];
    for (let i = 0; i < items.length; i++)
      for (let j = i + 1; j < items.length; j++) {
        const d = hammingDistance(items[i]!.hash, items[j]!.hash);
        if (d <= s.threshold) {
          parent[find(i)] = find(j);
          pairs.push({ a: items[i]!.name, b: items[j]!.name, distance: d });
        }
      }
    const byRoot = new Map<number, Item[]>();
    items.forEach((it, i) => {
      byRoot.set(find(i), [...(byRoot.get(find(i)) ?? []), it]);
    });
    const groups = [...byRoot.values()]
      .filter((g) => g.length > 1)
      .map((g) => {
        const best = [...g].sort((x, y) => y.pixels - x.pixels || y.size - x.size || x.index - y.index)[0]!;
        return {
          best: best.name,
          files: g.map((it) => {
            const distance = hammingDistance(it.hash, best.hash);
            return {
              name: it.name,
              index: it.index,
              width: it.width,
              height: it.height,
              size: it.size,
              distance,
              similarity: +(100 * (1 - distance / 64)).toFixed(2),
            };
          }),
        };
      });
    return {
      outputs: [],
      data: {
        threshold: s.threshold,
        totalFiles: files.length,
        duplicateGroups: groups.length,
        groups,
        pairs,
        hashes: items.map((it) => ({ name: it.name, hash: it.hash.toString(16).padStart(16, '0') })),
        skipped,
      },
    };
  },
});
