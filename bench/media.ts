/**
 * Media: kiln against ffmpeg run directly with the arguments kiln gives it (written out below as a
 * user would type them, so a change in kiln's encoder settings shows up as a ratio, not silently).
 *   - convert a 10-s 720p H.264/AAC MKV to MP4 (balanced: x264 veryfast CRF 23, AAC 128k, faststart),
 *   - trim 2 s - 6 s of it by stream copy,
 *   - normalize-audio on a 30-s MP3 against a two-pass loudnorm done by hand.
 */
import { existsSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bench, dir, heavy, kilnCli, kilnRun, requireOutput, shAsync, type BenchOptions, type FamilyResult } from './lib.js';

const THREADS = String(Math.max(1, os.availableParallelism?.() ?? os.cpus().length));
const FF = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error'];

async function make(p: string, args: string[]): Promise<string> {
  if (existsSync(p)) return p;
  const tmp = p.replace(/(\.\w+)$/, '.tmp$1');
  await shAsync('ffmpeg', [...FF, ...args, tmp]);
  renameSync(tmp, p);
  return p;
}

export async function mediaFixtures(o: BenchOptions): Promise<{ clip: string; song: string }> {
  const fx = dir(o.fixDir, 'media');
  const [size, secs] = o.smoke ? ['320x240', 3] : ['1280x720', 10];
  const clip = await make(path.join(fx, `clip-${size}-${secs}s.mkv`), [
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${size}:rate=30:duration=${secs}`,
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:duration=${secs}`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '30',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
  ]);
  const asecs = o.smoke ? 3 : 30;
  // A tone whose level swells and falls, so loudnorm has real work in both passes.
  const song = await make(path.join(fx, `tone-${asecs}s.mp3`), [
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=220:duration=${asecs}:sample_rate=44100,volume='0.05+0.3*abs(sin(t/2))':eval=frame`,
    '-c:a',
    'libmp3lame',
    '-b:a',
    '192k',
  ]);
  return { clip, song };
}

async function normalizeByHand(input: string, out: string): Promise<void> {
  const measured = await shAsync('ffmpeg', [
    '-hide_banner',
    '-nostdin',
    '-y',
    '-i',
    input,
    '-vn',
    '-sn',
    '-af',
    'loudnorm=I=-16:TP=-1.5:LRA=11:print_format=json',
    '-f',
    'null',
    '-',
  ]);
  const m = /\{[^{}]*"input_i"[^{}]*\}/.exec(measured);
  if (!m) throw new Error('loudnorm printed no measurement');
  const j = JSON.parse(m[0]) as Record<string, string>;
  const filter = `loudnorm=I=-16:TP=-1.5:LRA=11:measured_I=${j.input_i}:measured_TP=${j.input_tp}:measured_LRA=${j.input_lra}:measured_thresh=${j.input_thresh}:offset=${j.target_offset}:linear=true`;
  await shAsync('ffmpeg', [
    ...FF,
    '-i',
    input,
    '-map',
    '0:a:0',
    '-vn',
    '-sn',
    '-af',
    filter,
    '-c:a',
    'libmp3lame',
    '-b:a',
    '192k',
    '-map_metadata',
    '0',
    '-ar',
    '44100',
    out,
  ]);
  requireOutput(out);
}

export async function benchMedia(o: BenchOptions): Promise<FamilyResult> {
  const b = new Bench(o, 'media');
  const out = dir(o.outDir, 'media');
  const { clip, song } = await mediaFixtures(o);
  const ff = (args: string[], p: string) => async () => {
    await shAsync('ffmpeg', [...FF, ...args, p]);
    requireOutput(p);
  };

  b.heading(`trim 2 s - ${o.smoke ? 3 : 6} s by stream copy (${path.basename(clip)})`);
  const endS = o.smoke ? 3 : 6;
  await b.compare([
    [
      'ffmpeg-trim',
      'ffmpeg -ss -t -c copy direct',
      (i) =>
        ff(
          [
            '-ss',
            '2',
            '-i',
            clip,
            '-t',
            String(endS - 2),
            '-map',
            '0:v:0',
            '-map',
            '0:a:0',
            '-c',
            'copy',
            '-avoid_negative_ts',
            'make_zero',
            '-map_metadata',
            '0',
          ],
          path.join(out, `t${i}.mkv`),
        )(),
    ],
    ['kiln-trim', 'kiln runTool trim-video', () => kilnRun(o, 'trim-video', [clip], { startS: 2, endS })],
    !o.smoke && [
      'cli-trim',
      'kiln CLI trim-video',
      (i) => kilnCli(['trim-video', clip, '--start-s', '2', '--end-s', String(endS), '-o', path.join(out, `kt${i}.mkv`), '-q']),
    ],
  ]);
  b.ratios([
    ['kiln-trim', 'ffmpeg-trim', 'adds one ffprobe'],
    ['cli-trim', 'ffmpeg-trim'],
  ]);
  if (o.smoke) return b.result;

  // The encode dominates and barely varies: fewer runs.
  const long = heavy(o);
  b.heading('convert a 10-s 1280x720 H.264 MKV → MP4 (x264 veryfast CRF 23, AAC 128k)');
  await b.compare(
    [
      [
        'ffmpeg-convert',
        'ffmpeg direct, same arguments',
        (i) =>
          ff(
            [
              '-i',
              clip,
              '-map',
              '0:v:0',
              '-map',
              '0:a:0',
              '-c:v',
              'libx264',
              '-preset',
              'veryfast',
              '-crf',
              '23',
              '-pix_fmt',
              'yuv420p',
              '-threads',
              THREADS,
              '-c:a',
              'aac',
              '-b:a',
              '128k',
              '-movflags',
              '+faststart',
              '-map_metadata',
              '0',
            ],
            path.join(out, `c${i}.mp4`),
          )(),
      ],
      ['kiln-convert', 'kiln runTool convert-video --format mp4', () => kilnRun(o, 'convert-video', [clip], { format: 'mp4' })],
      [
        'cli-convert',
        'kiln CLI convert-video --format mp4',
        (i) => kilnCli(['convert-video', clip, '--format', 'mp4', '-o', path.join(out, `kc${i}.mp4`), '-q']),
      ],
    ],
    long,
  );
  b.ratios([
    ['kiln-convert', 'ffmpeg-convert'],
    ['cli-convert', 'ffmpeg-convert'],
  ]);

  b.heading('normalize a 30-s MP3 to -16 LUFS (two-pass loudnorm)');
  await b.compare(
    [
      ['ffmpeg-loudnorm', 'ffmpeg loudnorm two passes by hand', (i) => normalizeByHand(song, path.join(out, `n${i}.mp3`))],
      ['kiln-normalize', 'kiln runTool normalize-audio', () => kilnRun(o, 'normalize-audio', [song])],
      ['cli-normalize', 'kiln CLI normalize-audio', (i) => kilnCli(['normalize-audio', song, '-o', path.join(out, `kn${i}.mp3`), '-q'])],
    ],
    long,
  );
  b.ratios([
    ['kiln-normalize', 'ffmpeg-loudnorm'],
    ['cli-normalize', 'ffmpeg-loudnorm'],
  ]);
  return b.result;
}
