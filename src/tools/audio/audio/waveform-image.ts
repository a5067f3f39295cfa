import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { colorSchema, ffmpegColor } from '../../_shared/color.js';
import { outputFile } from '../../_shared/output.js';
import { probeAudio } from '../_shared/audio-input.js';

export default defineTool({
  id: 'waveform-image',
  section: 'audio',
  group: 'audio',
  summary: 'Render an audio waveform as an image.',
  description: 'The whole track as one waveform (channels mixed), drawn in color on a transparent PNG.',
  input: { kind: 'file', accept: ['audio/*'] },
  settings: z.object({
    width: z.int().min(256).max(3840).default(1024).describe('Image width.'),
    height: z.int().min(64).max(1080).default(256).describe('Image height.'),
    color: colorSchema('#4f46e5').describe('Waveform color.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'PNG image',
  examples: ['song.mp3 --width 1920 --height 200 --color "#ff5500" -o wave.png'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeAudio(input, ctx.signal);
    const out = ctx.out('png');
    ctx.progress(10, 'drawing');
    await runFfmpeg(
      [
        '-i',
        input.path,
        '-filter_complex',
        `[0:a:0]aformat=channel_layouts=mono,showwavespic=s=${s.width}x${s.height}:colors=${ffmpegColor(s.color)}:scale=sqrt[v]`,
        '-map',
        '[v]',
        '-frames:v',
        '1',
        '-update',
        '1',
      ],
      { signal: ctx.signal, durationS: info.duration, output: out },
    );
    return { outputs: [outputFile(out)] };
  },
});
