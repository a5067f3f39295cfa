import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../../core/errors.js';
import type { OutputFile } from '../../../core/tool.js';
import { toSdrFilters } from '../../../engines/ffmpeg/hdr.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeVideo } from '../_shared/video-input.js';

/** A ZIP of more frames than this is rarely what anyone wants and can fill a disk. */
const MAX_FRAMES = Number(process.env.KILN_MAX_FRAMES) || 10_000;

function parseTimestamps(s: string): number[] | undefined {
  const parts = s
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  const nums = parts.map(Number);
  if (nums.some((n) => !Number.isFinite(n) || n < 0)) return undefined;
  return nums;
}

export default defineTool({
  id: 'video-to-frames',
  section: 'video',
  group: 'video',
  summary: 'Extract all, every n-th, or specific frames as images in a ZIP.',
  description:
    'Frames are named frame-00001.png, … (timestamps mode: frame-<seconds>s.png). At most 10,000 frames per run. HDR video (PQ or HLG) is tone-mapped to SDR colours.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    mode: z.enum(['all', 'nth', 'timestamps']).default('all').describe('Extraction mode.'),
    n: z.int().min(2).max(1000).default(10).describe('Keep every n-th frame.'),
    timestamps: z
      .string()
      .default('')
      .describe("Timestamps to grab (required in timestamps mode), comma-separated seconds, e.g. '1.5,3,10'."),
    format: z.enum(['png', 'jpg']).default('png').describe('Frame image format.'),
  }),
  check: (s) => {
    if (s.mode !== 'timestamps') return;
    const t = parseTimestamps(s.timestamps);
    if (!t) return 'timestamps must be comma-separated seconds, e.g. 1.5,3,10.';
    if (t.length === 0) return 'timestamps mode needs at least one timestamp.';
  },
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'ZIP of numbered frame images',
  examples: ['clip.mp4 --mode nth --n 30 -o frames.zip', 'clip.mp4 --mode timestamps --timestamps 1.5,3 --format jpg -o frames.zip'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const dir = path.join(ctx.workDir, 'frames');
    await mkdir(dir, { recursive: true });
    const enc = s.format === 'jpg' ? ['-q:v', '2'] : [];
    // HDR (PQ, HLG) is tone-mapped: PNG and JPEG are shown as sRGB.
    const sdr = (await toSdrFilters(info.video)).replace(/,$/, '');
    const sdrVf = sdr ? ['-vf', sdr] : [];
    if (s.mode === 'timestamps') {
      const ts = parseTimestamps(s.timestamps)!;
      const late = ts.find((t) => info.duration > 0 && t >= info.duration);
      if (late !== undefined)
        throw new KilnError('VALIDATION_ERROR', `Timestamp ${late} s is beyond the end of the video (${info.duration.toFixed(2)} s).`);
      for (const [i, t] of ts.entries()) {
        ctx.progress((i / ts.length) * 100, `frame ${i + 1}/${ts.length}`);
        const name = `frame-${String(i + 1).padStart(3, '0')}-${t}s.${s.format}`;
        const output = path.join(dir, name);
        await runFfmpeg(['-ss', String(t), '-i', input.path, '-map', '0:v:0', '-frames:v', '1', ...sdrVf, ...enc, '-update', '1'], {
          signal: ctx.signal,
          output,
        }).catch((e: unknown) => {
          // A time after the last frame starts but before the end (2.99 s of a 3 s clip at 25 fps, whose last
          // frame starts at 2.96 s; or a longer audio track) decodes nothing: the last frame is what shows then.
          if (!(e instanceof KilnError && e.reason === 'empty-output')) throw e;
          return runFfmpeg(['-sseof', '-1', '-i', input.path, '-map', '0:v:0', ...sdrVf, ...enc, '-update', '1'], {
            signal: ctx.signal,
            output,
          });
        });
      }
    } else {
      const fps = info.video.fps ?? 30;
      const expected = (info.duration * fps) / (s.mode === 'nth' ? s.n : 1);
      if (expected > MAX_FRAMES) {
        throw new KilnError(
          'LIMIT_EXCEEDED',
          `That would extract about ${Math.round(expected)} frames; the limit is ${MAX_FRAMES}. Use mode nth or timestamps.`,
        );
      }
      const chain = [s.mode === 'nth' ? `select=not(mod(n\\,${s.n}))` : '', sdr].filter(Boolean).join(',');
      const vf = chain ? ['-vf', chain] : [];
      // Frames go to a private directory first; a cancelled run leaves only the workspace to remove.
      await runFfmpeg(['-i', input.path, '-map', '0:v:0', ...vf, '-fps_mode', 'vfr', ...enc, path.join(dir, `frame-%05d.${s.format}`)], {
        signal: ctx.signal,
        durationS: info.duration,
        onProgress: progressSpan(ctx, 0, 95, 'extracting'),
      });
    }
    const names = (await readdir(dir)).filter((n) => !n.startsWith('.')).sort();
    if (names.length === 0) throw new KilnError('UNSUPPORTED_INPUT', `No frames could be decoded from ${input.name}.`);
    const outputs: OutputFile[] = names.map((n) => outputFile(path.join(dir, n)));
    return { outputs, data: { frames: names.length } };
  },
});
