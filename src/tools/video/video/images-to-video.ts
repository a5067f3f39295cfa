import path from 'node:path';
import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { encodeVideoArgs } from '../../../engines/ffmpeg/codecs.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { openInput } from '../../image/_shared/decode.js';

const SIZE = { '1080p': [1920, 1080], '720p': [1280, 720], square: [1080, 1080] } as const;

export default defineTool({
  id: 'images-to-video',
  section: 'video',
  group: 'video',
  summary: 'Build a slideshow video from several images.',
  description:
    'Images in the order given, each shown secondsPerImage, fitted whole into the frame on black (1080p 1920x1080, 720p 1280x720, square 1080x1080). H.264 MP4 without audio.',
  input: { kind: 'files', accept: ['image/*'], min: 2, max: 60 },
  settings: z.object({
    secondsPerImage: z.number().min(0.5).max(10).default(2).describe('Display time per image.'),
    resolution: z.enum(['1080p', '720p', 'square']).default('720p').describe('Output size (square = 1080x1080).'),
    fps: z.int().min(10).max(60).default(30).describe('Output frame rate.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video (H.264 MP4)',
  examples: ['a.jpg b.png c.webp --seconds-per-image 3 -o slideshow.mp4'],
  async run(ctx, { files }, s) {
    const [W, H] = SIZE[s.resolution];
    // sharp decodes every image format kiln accepts (HEIC, SVG, EXIF rotation…), so ffmpeg only sees same-size PNGs.
    const frames: string[] = [];
    for (const [i, f] of files.entries()) {
      if (ctx.signal.aborted) break;
      ctx.progress((i / files.length) * 20, 'preparing images');
      const p = path.join(ctx.workDir, `slide-${String(i).padStart(3, '0')}.png`);
      const img = await openInput(f, ctx.workDir, ctx.signal);
      await img
        .autoOrient()
        .resize(W, H, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 1 } })
        .flatten({ background: '#000000' })
        .png({ compressionLevel: 1 })
        .toFile(p);
      frames.push(p);
    }
    const n = frames.length;
    const graph =
      frames.map((_, i) => `[${i}:v]fps=${s.fps},format=yuv420p,setsar=1[v${i}]`).join(';') +
      ';' +
      frames.map((_, i) => `[v${i}]`).join('') +
      `concat=n=${n}:v=1:a=0[v]`;
    const out = ctx.out('mp4');
    const total = n * s.secondsPerImage;
    await runFfmpeg(
      [
        ...frames.flatMap((p) => ['-loop', '1', '-framerate', String(s.fps), '-t', String(s.secondsPerImage), '-i', p]),
        '-filter_complex',
        graph,
        '-map',
        '[v]',
        ...encodeVideoArgs('mp4', { audio: false }),
        '-r',
        String(s.fps),
      ],
      { signal: ctx.signal, durationS: total, onProgress: progressSpan(ctx, 20, 100, 'encoding'), output: out },
    );
    return { outputs: [outputFile(out)], data: { images: n, durationS: total, width: W, height: H } };
  },
});
