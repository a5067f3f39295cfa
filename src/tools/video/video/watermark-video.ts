import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../../../core/errors.js';
import { ffmpegCapabilities } from '../../../engines/ffmpeg/capabilities.js';
import { colorSchema, ffmpegColor } from '../../_shared/color.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

const M = 'max(8\\,h*0.03)';
const POS = {
  tl: [M, M],
  tc: ['(w-text_w)/2', M],
  tr: [`w-text_w-${M}`, M],
  l: [M, '(h-text_h)/2'],
  c: ['(w-text_w)/2', '(h-text_h)/2'],
  r: [`w-text_w-${M}`, '(h-text_h)/2'],
  bl: [M, `h-text_h-${M}`],
  bc: ['(w-text_w)/2', `h-text_h-${M}`],
  br: [`w-text_w-${M}`, `h-text_h-${M}`],
} as const;

const FONT = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';

export default defineTool({
  id: 'watermark-video',
  section: 'video',
  group: 'video',
  summary: 'Burn a text watermark into a video.',
  description: 'Text drawn with drawtext (DejaVu Sans) at one of nine positions, with a margin of 3% of the height.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    text: z.string().min(1).max(200).describe('Watermark text.'),
    position: z.enum(['tl', 'tc', 'tr', 'l', 'c', 'r', 'bl', 'bc', 'br']).default('br').describe('Position on the frame.'),
    fontSize: z.int().min(8).max(120).default(36).describe('Font size.'),
    opacity: z.number().min(0.05).max(1).default(0.5).describe('Opacity.'),
    color: colorSchema('#ffffff').describe('Text color.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --text "© Kiln" --position br -o marked.mp4'],
  async run(ctx, { files }, s) {
    if (!(await ffmpegCapabilities()).drawtext)
      throw new KilnError('ENGINE_MISSING', 'This ffmpeg build lacks the drawtext filter (libfreetype).');
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    // The text goes through a file so no character of it can break the filter graph's syntax.
    await writeFile(path.join(ctx.workDir, 'watermark.txt'), s.text);
    const [x, y] = POS[s.position];
    const font = existsSync(FONT) ? `fontfile=${FONT}` : 'font=Sans';
    const vf = `drawtext=${font}:textfile=watermark.txt:expansion=none:fontsize=${s.fontSize}:fontcolor=${ffmpegColor(s.color, s.opacity)}:x=${x}:y=${y}`;
    return transcodeVideo(ctx, input, info, { vf, cwd: ctx.workDir, stage: 'watermarking', keepStreams: true });
  },
});
