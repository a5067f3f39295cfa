import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { encodeVideoArgs } from '../../../engines/ffmpeg/codecs.js';
import { displaySize } from '../../../engines/ffmpeg/probe.js';
import { runFfmpeg } from '../../../engines/ffmpeg/run.js';
import { outputFile } from '../../_shared/output.js';
import { progressSpan } from '../../_shared/progress.js';
import { probeVideo } from '../_shared/video-input.js';

export default defineTool({
  id: 'merge-videos',
  section: 'video',
  group: 'video',
  summary: "Concatenate several clips, normalized to the first video's resolution.",
  description:
    "Every clip is scaled to fit the first video's frame (letterboxed, never distorted), converted to its frame rate and audio sample rate, " +
    'then joined in order with the concat filter. Clips without audio get silence. Output: H.264/AAC MP4.',
  input: { kind: 'files', accept: ['video/*'], min: 2, max: 10 },
  settings: z.object({}),
  needs: { engines: ['ffmpeg', 'ffprobe'] },
  execution: 'long',
  output: 'video (H.264 MP4)',
  examples: ['part1.mp4 part2.mov -o merged.mp4'],
  async run(ctx, { files }) {
    const infos = [];
    for (const f of files) infos.push(await probeVideo(f, ctx.signal));
    const first = infos[0]!;
    const { width: W, height: H } = displaySize(first.video);
    const fps = first.video.fps && first.video.fps <= 120 ? first.video.fps : 30;
    const audio = infos.some((i) => i.audio);
    const sr = first.audio?.sampleRate ?? infos.find((i) => i.audio)?.audio?.sampleRate ?? 48000;
    const parts: string[] = [];
    const pads: string[] = [];
    infos.forEach((info, i) => {
      parts.push(
        `[${i}:v:0]scale=${W}:${H}:force_original_aspect_ratio=decrease,pad=${W}:${H}:(ow-iw)/2:(oh-ih)/2,setsar=1,fps=${fps.toFixed(6)}:round=up,format=yuv420p,settb=AVTB,setpts=PTS-STARTPTS[v${i}]`,
      );
      if (audio) {
        // Each clip's audio is cut or padded to that clip's length, so picture and sound stay in step.
        const src = info.audio ? `[${i}:a:0]` : `anullsrc=r=${sr}:cl=stereo,`;
        parts.push(
          `${src}aresample=${sr},aformat=sample_fmts=fltp:channel_layouts=stereo,apad,atrim=0:${info.duration.toFixed(6)},asetpts=PTS-STARTPTS[a${i}]`,
        );
      }
      pads.push(`[v${i}]` + (audio ? `[a${i}]` : ''));
    });
    const graph = `${parts.join(';')};${pads.join('')}concat=n=${files.length}:v=1:a=${audio ? 1 : 0}[v]${audio ? '[a]' : ''}`;
    const out = ctx.out('mp4');
    const total = infos.reduce((a, i) => a + i.duration, 0);
    await runFfmpeg(
      [
        ...files.flatMap((f) => ['-i', f.path]),
        '-filter_complex',
        graph,
        '-map',
        '[v]',
        ...(audio ? ['-map', '[a]'] : []),
        ...encodeVideoArgs('mp4', { audio }),
      ],
      { signal: ctx.signal, durationS: total, onProgress: progressSpan(ctx, 0, 100, 'merging'), output: out },
    );
    return { outputs: [outputFile(out)], data: { clips: files.length, width: W, height: H, fps: Number(fps.toFixed(3)) } };
  },
});
