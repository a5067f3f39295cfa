import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { KilnError } from '../../../core/errors.js';
import { even } from '../../../engines/ffmpeg/probe.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'crop-video',
  section: 'video',
  group: 'video',
  summary: 'Crop a rectangular region out of every frame.',
  description:
    'x and y are the top-left corner in displayed pixels. Width and height are rounded down to even numbers (4:2:0 video needs them).',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    width: z.int().min(16).describe('Crop width.'),
    height: z.int().min(16).describe('Crop height.'),
    x: z.int().min(0).default(0).describe('Left offset.'),
    y: z.int().min(0).default(0).describe('Top offset.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --width 640 --height 360 --x 100 --y 50 -o cropped.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const src = {
      width: info.video.rotation % 180 ? info.video.height! : info.video.width!,
      height: info.video.rotation % 180 ? info.video.width! : info.video.height!,
    };
    if (s.x + s.width > src.width || s.y + s.height > src.height) {
      throw new KilnError(
        'VALIDATION_ERROR',
        `The crop ${s.width}x${s.height} at (${s.x}, ${s.y}) does not fit the ${src.width}x${src.height} video.`,
        {
          details: [{ path: 'width', message: 'crop outside the frame' }],
        },
      );
    }
    return transcodeVideo(ctx, input, info, {
      vf: `crop=${even(s.width)}:${even(s.height)}:${s.x}:${s.y}`,
      stage: 'cropping',
      keepStreams: true,
    });
  },
});
