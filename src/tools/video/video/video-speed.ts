import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { retimedChapters } from '../../../engines/ffmpeg/chapters.js';
import { atempoChain } from '../../audio/_shared/tempo.js';
import { transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

/** Why subtitle tracks are left out: cues keep their times while the picture is retimed. */
const RETIMED = 'its cue times would not match the retimed video';

export default defineTool({
  id: 'video-speed',
  section: 'video',
  group: 'video',
  summary: 'Speed a video up or slow it down, optionally keeping audio pitch.',
  description:
    'keepPitch stretches the audio with a chain of atempo filters (pitch kept); without it the audio is resampled, so pitch follows the speed.',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    factor: z.number().min(0.25).max(4).default(2).describe('Speed multiplier.'),
    keepPitch: z.boolean().default(true).describe('Preserve audio pitch.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  output: 'video in the input format',
  examples: ['clip.mp4 --factor 2 -o fast.mp4', 'clip.mp4 --factor 0.5 --keep-pitch false -o slow.mp4'],
  async run(ctx, { files }, s) {
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    const sr = info.audio?.sampleRate ?? 48000;
    // The one -af runs on every audio track: each is brought to the first track's rate before asetrate,
    // or a track at another rate (44.1 kHz beside 48 kHz) would change speed by a different factor.
    const af = s.keepPitch ? atempoChain(s.factor) : `aresample=${sr},asetrate=${Math.round(sr * s.factor)},aresample=${sr}`;
    const chapters = await retimedChapters(info, (t) => t / s.factor, ctx.workDir, 1);
    return transcodeVideo(ctx, input, info, {
      vf: `setpts=PTS/${s.factor}`,
      af,
      extraInputs: chapters.input,
      outArgs: chapters.map,
      durationS: info.duration / s.factor,
      stage: 'retiming',
      keepStreams: true,
      subtitlesLeftOut: RETIMED,
    });
  },
});
