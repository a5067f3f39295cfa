import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import path from 'node:path';
import { KilnError } from '../../../core/errors.js';
import { ffmpegCapabilities } from '../../../engines/ffmpeg/capabilities.js';
import { EVEN_SIDES_FILTER } from '../../../engines/ffmpeg/codecs.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { progressSpan } from '../../_shared/progress.js';
import { refuseUnderTwoPixels, transcodeVideo } from '../_shared/transcode-video.js';
import { probeVideo } from '../_shared/video-input.js';

/**
 * What both vidstab passes see: libvidstab asserts even sides (it aborts on 101x75) and planar YUV (it
 * aborts on the packed RGB of an FFV1 or PNG-in-MOV recording), so the frames are even-cropped and made
 * 4:2:0 first, the same in both passes so the motion file fits the frames it transforms.
 */
const VIDSTAB_INPUT = `${EVEN_SIDES_FILTER},format=yuv420p`;

export default defineTool({
  id: 'stabilize-video',
  section: 'video',
  group: 'video',
  summary: 'Reduce camera shake with two-pass stabilization.',
  description:
    'Pass one (vidstabdetect) measures the camera motion, pass two (vidstabtransform) smooths it over smoothing frames on each side and sharpens lightly. ' +
    'Needs an ffmpeg build with libvidstab (kiln doctor tells).',
  input: { kind: 'file', accept: ['video/*'] },
  settings: z.object({
    smoothing: z.int().min(5).max(60).default(15).describe('Smoothing window.'),
  }),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  execution: 'long',
  output: 'video in the input format',
  examples: ['shaky.mp4 --smoothing 30 -o steady.mp4'],
  async run(ctx, { files }, s) {
    if (!(await ffmpegCapabilities()).vidstab) {
      throw new KilnError(
        'ENGINE_MISSING',
        'This ffmpeg build lacks vidstab (vidstabdetect/vidstabtransform); install an ffmpeg built with libvidstab (kiln doctor shows the build).',
        {
          reason: 'ffmpeg-without-vidstab',
        },
      );
    }
    const input = files[0]!;
    const info = await probeVideo(input, ctx.signal);
    // The even-sides crop vidstab needs leaves nothing of a side of one pixel (ffmpeg: 'Error reinitializing filters').
    refuseUnderTwoPixels(input, info, 'stabilization');
    // Relative name in cwd=workDir: vidstab's file option would otherwise need filter-graph escaping of the path.
    await runFfmpeg(
      [
        '-i',
        path.resolve(input.path),
        '-map',
        '0:v:0',
        '-vf',
        `${VIDSTAB_INPUT},vidstabdetect=shakiness=6:accuracy=15:result=motion.trf`,
        '-f',
        'null',
        '-',
      ],
      {
        signal: ctx.signal,
        durationS: info.duration,
        onProgress: progressSpan(ctx, 0, 45, 'analysing motion'),
        cwd: ctx.workDir,
      },
    );
    const vf = `${VIDSTAB_INPUT},vidstabtransform=input=motion.trf:smoothing=${s.smoothing}:zoom=0:optzoom=1,unsharp=5:5:0.8:3:3:0.4`;
    return transcodeVideo(ctx, input, info, { vf, cwd: ctx.workDir, progress: [45, 100], stage: 'stabilizing', keepStreams: true });
  },
});
