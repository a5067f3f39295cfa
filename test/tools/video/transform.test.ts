import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it, before } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import {
  duration,
  ffprobe,
  fps,
  frameCount,
  frameDiff,
  frameRgb,
  makeSrt,
  makeVideo,
  runMedia,
  stream,
  zeroCrossingHz,
} from '../../helpers/media.js';

const dir = tempDir();
let clip: string;

before(() => {
  clip = makeVideo(dir, 'clip.mp4', { durationS: 2, fps: 25 });
});

const isCode = (code: string) => (e: KilnError) => e.code === code;

describe('convert-video', () => {
  it('writes codecs that fit each container', async () => {
    const cases = [
      ['webm', 'vp9', 'opus', 'matroska,webm'],
      ['avi', 'mpeg4', 'mp3', 'avi'],
      ['mov', 'h264', 'aac', 'mov,mp4,m4a,3gp,3g2,mj2'],
      ['mkv', 'h264', 'aac', 'matroska,webm'],
    ] as const;
    for (const [format, v, a, fmt] of cases) {
      const r = await runMedia(dir, 'convert-video', [clip], { format, quality: 'small' });
      const p = ffprobe(r.path);
      assert.equal(r.name, `clip.${format}`);
      assert.equal(p.format.format_name, fmt);
      assert.equal(stream(p, 'video')!.codec_name, v, format);
      assert.equal(stream(p, 'audio')!.codec_name, a, format);
      assert.ok(Math.abs(Number(p.format.duration) - 2) < 0.15, `${format} duration ${p.format.duration}`);
    }
  });
  it('mp4 is H.264/AAC with the index at the front (faststart)', async () => {
    const src = makeVideo(dir, 'in.mkv');
    const r = await runMedia(dir, 'convert-video', [src], { format: 'mp4' });
    const p = ffprobe(r.path);
    assert.deepEqual([stream(p, 'video')!.codec_name, stream(p, 'audio')!.codec_name], ['h264', 'aac']);
    const head = (await import('node:fs')).readFileSync(r.path).subarray(0, 4096).toString('latin1');
    assert.ok(
      head.indexOf('moov') >= 0 && head.indexOf('moov') < (head.indexOf('mdat') === -1 ? Infinity : head.indexOf('mdat')),
      'moov before mdat',
    );
  });
  it('keeps every audio track and the subtitles the container holds; names what it leaves out', async () => {
    // Conversions kept only the first audio track and dropped every subtitle track without a word.
    const srt = makeSrt(dir, 'tracks.srt', [{ start: 0, end: 1, text: 'Hello tracks' }]);
    const src = path.join(dir, 'tracks.mkv');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=s=64x48:r=10:d=1'],
      ...['-f', 'lavfi', '-i', 'sine=f=440:d=1', '-f', 'lavfi', '-i', 'sine=f=880:d=1', '-i', srt],
      ...['-map', '0', '-map', '1', '-map', '2', '-map', '3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
      ...['-c:a', 'aac', '-c:s', 'srt', '-metadata:s:a:1', 'language=deu', '-metadata:s:s:0', 'language=fra', src],
    ]);
    const cases = [
      ['mp4', 'convert-video', 'mov_text'],
      ['webm', 'convert-video', 'webvtt'],
      ['mkv', 'compress-video', 'subrip'],
      ['avi', 'convert-video', undefined],
    ] as const;
    for (const [format, tool, subtitle] of cases) {
      const r = await runMedia(dir, tool, [src], tool === 'convert-video' ? { format, quality: 'small' } : {});
      const p = ffprobe(r.path);
      const types = p.streams.map((x) => x.codec_type);
      assert.deepEqual(types, ['video', 'audio', 'audio', ...(subtitle ? ['subtitle'] : [])], format);
      // AVI has no stream languages.
      if (format !== 'avi') assert.equal(p.streams[2]!.tags?.language, 'deu', format);
      if (subtitle) {
        assert.equal(p.streams[3]!.codec_name, subtitle, format);
        assert.equal(p.streams[3]!.tags?.language, 'fra', format);
        const text = execFileSync('ffmpeg', ['-v', 'error', '-i', r.path, '-map', '0:s:0', '-f', 'srt', '-'], { encoding: 'utf8' });
        assert.match(text, /Hello tracks/, format);
        assert.equal(r.data?.warnings, undefined, format);
      } else assert.deepEqual(r.data?.warnings, ['subtitle stream 3 (subrip) left out: AVI holds no subtitle tracks']);
    }
  });
  it('reports increasing progress', async () => {
    const long = makeVideo(dir, 'long.mp4', { durationS: 3 });
    const r = await runMedia(dir, 'convert-video', [long], { format: 'mp4', quality: 'high' });
    const mid = r.progress.filter((p) => p > 0 && p < 100);
    assert.ok(mid.length >= 1, `progress ${r.progress.join(',')}`);
    for (let i = 1; i < r.progress.length; i++) assert.ok(r.progress[i]! >= r.progress[i - 1]!, `not increasing: ${r.progress.join(',')}`);
    assert.equal(r.progress.at(-1), 100);
  });
});

describe('compress-video', () => {
  it('downscales to the chosen shorter side and shrinks the file', async () => {
    const big = makeVideo(dir, 'big.mp4', { width: 640, height: 480, durationS: 1 });
    const r = await runMedia(dir, 'compress-video', [big], { quality: 'strong', resolution: '480p' });
    const v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.width, v.height], [640, 480]);
    const r2 = await runMedia(dir, 'compress-video', [big], { resolution: '720p', quality: 'light' });
    assert.equal(stream(ffprobe(r2.path), 'video')!.height, 480, 'never enlarged');
    const { statSync } = await import('node:fs');
    assert.ok(statSync(r.path).size < statSync(r2.path).size * 0.8, `strong ${statSync(r.path).size} vs light ${statSync(r2.path).size}`);
    const small = makeVideo(dir, 'big2.mp4', { width: 1280, height: 720, durationS: 1 });
    const r3 = await runMedia(dir, 'compress-video', [small], { resolution: '480p' });
    const v3 = stream(ffprobe(r3.path), 'video')!;
    assert.deepEqual([v3.width, v3.height], [852, 480]);
  });
});

/** A 1 s 101x75 clip: testsrc (testsrc2 rounds its size to even) as H.264 4:4:4 (which takes odd sides) or FFV1 RGB. */
const oddClip = (name: string, codec: string[]) => {
  const p = path.join(dir, name);
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=s=101x75:r=25:d=1', ...codec, p]);
  return p;
};

describe('odd-sided input (101x75)', () => {
  // H.264 in 4:2:0 refuses odd sides ("width not divisible by 2"): the re-encoding tools failed with INTERNAL.
  it('re-encodes into H.264 cropped to even sides; VP9 keeps them', async () => {
    const odd = oddClip('odd.mkv', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv444p']);
    const cases: [string, Record<string, unknown>][] = [
      ['convert-video', { format: 'mp4' }],
      ['compress-video', {}],
      ['trim-video', { startS: 0, endS: 0.6, precise: true }],
      ['video-color', { brightness: 0.1 }],
      ['reverse-video', {}],
    ];
    for (const [tool, settings] of cases) {
      const r = await runMedia(dir, tool, [odd], settings);
      const v = stream(ffprobe(r.path), 'video')!;
      assert.deepEqual([v.codec_name, v.width, v.height, v.pix_fmt], ['h264', 100, 74, 'yuv420p'], tool);
      assert.ok(frameCount(r.path) >= 14, `${tool} frames ${frameCount(r.path)}`);
    }
    const webm = stream(ffprobe((await runMedia(dir, 'convert-video', [odd], { format: 'webm', quality: 'small' })).path), 'video')!;
    assert.deepEqual([webm.width, webm.height], [101, 75]);
  });
});

describe('one-pixel input', () => {
  // The even-sides crop left 0 pixels: trim-video (precise) and stabilize-video failed with ffmpeg's raw
  // "Error reinitializing filters" (INTERNAL, exit 1); reverse-video already refused by name.
  it('trim-video (precise, H.264) and stabilize-video refuse it by name; a WebM trim still works', async () => {
    // testsrc2 has no 1x1 picture; testsrc has.
    const one = { width: 1, height: 1, durationS: 1, fps: 10, audio: false, source: 'testsrc=d=1' };
    const dot = makeVideo(dir, 'dot.mkv', { ...one, extra: ['-c:v', 'libvpx-vp9'] });
    const refused = (what: RegExp) => (e: KilnError) =>
      e.code === 'UNSUPPORTED_INPUT' && /dot\.mkv is 1x1 pixels: /.test(e.message) && what.test(e.message);
    await assert.rejects(runMedia(dir, 'trim-video', [dot], { endS: 0.5, precise: true }), refused(/MKV \(H\.264\) needs at least 2/));
    await assert.rejects(runMedia(dir, 'stabilize-video', [dot], {}), refused(/stabilization needs at least 2/));
    const webm = makeVideo(dir, 'dot.webm', one);
    const r = await runMedia(dir, 'trim-video', [webm], { endS: 0.5, precise: true });
    const v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.codec_name, v.width, v.height], ['vp9', 1, 1]);
    assert.ok(frameCount(r.path) >= 4, `frames ${frameCount(r.path)}`);
  });
});

describe('trim-video', () => {
  it('cuts frame-accurately with precise', async () => {
    const r = await runMedia(dir, 'trim-video', [clip], { startS: 0.52, endS: 1.48, precise: true });
    const d = duration(r.path);
    assert.ok(Math.abs(d - 0.96) <= 0.04 + 0.03, `duration ${d}`);
    assert.ok(Math.abs(frameCount(r.path) - 24) <= 1, 'frames');
  });
  it('copies streams on a keyframe cut', async () => {
    const r = await runMedia(dir, 'trim-video', [clip], { startS: 1, endS: 2 });
    assert.equal(r.data?.precise, false);
    const d = duration(r.path);
    assert.ok(d > 0.8 && d < 1.2, `duration ${d}`);
    assert.equal(stream(ffprobe(r.path), 'video')!.codec_name, 'h264');
  });
  it('rejects endS before startS and a start past the end', async () => {
    await assert.rejects(runMedia(dir, 'trim-video', [clip], { startS: 1, endS: 0.5 }), isCode('VALIDATION_ERROR'));
    await assert.rejects(runMedia(dir, 'trim-video', [clip], { startS: 5, endS: 6 }), isCode('VALIDATION_ERROR'));
  });
  it('a precise cut after the last frame starts is refused, not an audio-only file with exit 0', async () => {
    // The last frame of the 2 s, 25 fps clip starts at 1.96 s: ffmpeg dropped it and wrote the sound alone.
    await assert.rejects(
      runMedia(dir, 'trim-video', [clip], { startS: 1.99, endS: 2, precise: true }),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'empty-output',
    );
    const r = await runMedia(dir, 'trim-video', [clip], { startS: 1.9, endS: 2, precise: true });
    assert.ok(frameCount(r.path) >= 2, `frames ${frameCount(r.path)}`);
  });
});

describe('mute-video', () => {
  it('removes the audio stream and keeps the video', async () => {
    const r = await runMedia(dir, 'mute-video', [clip]);
    const p = ffprobe(r.path);
    assert.equal(stream(p, 'audio'), undefined);
    assert.equal(stream(p, 'video')!.codec_name, 'h264');
    assert.equal(frameCount(r.path), 50);
  });
});

describe('resize-video / crop-video / rotate-video', () => {
  it('resizes by preset and by one side', async () => {
    let r = await runMedia(dir, 'resize-video', [clip], { preset: '360p' });
    let v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.width, v.height], [480, 360]);
    r = await runMedia(dir, 'resize-video', [clip], { width: 81 });
    v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.width, v.height], [80, 60]);
    await assert.rejects(runMedia(dir, 'resize-video', [clip], {}), isCode('VALIDATION_ERROR'));
  });
  it('crops a region and refuses one outside the frame', async () => {
    const r = await runMedia(dir, 'crop-video', [clip], { width: 64, height: 48, x: 10, y: 20 });
    const v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.width, v.height], [64, 48]);
    await assert.rejects(runMedia(dir, 'crop-video', [clip], { width: 100, height: 100, x: 100 }), isCode('VALIDATION_ERROR'));
  });
  it('rotates 90° (dimensions swap) and mirrors (pixels flip)', async () => {
    const r = await runMedia(dir, 'rotate-video', [clip], { transform: 'cw90' });
    const v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.width, v.height], [120, 160]);
    const h = await runMedia(dir, 'rotate-video', [clip], { transform: 'hflip' });
    const a = frameRgb(clip, 0.5);
    const b = frameRgb(h.path, 0.5);
    // Pixel (x, y) of the source equals pixel (w-1-x, y) of the output.
    let same = 0;
    let mirrored = 0;
    for (let y = 10; y < 110; y += 10)
      for (let x = 5; x < 155; x += 10) {
        const i = (y * 160 + x) * 3;
        const j = (y * 160 + (159 - x)) * 3;
        same += Math.abs(a.data[i]! - b.data[i]!);
        mirrored += Math.abs(a.data[i]! - b.data[j]!);
      }
    assert.ok(mirrored < same / 3, `mirrored ${mirrored} vs same ${same}`);
  });
});

describe('change-fps / video-speed / reverse-video', () => {
  it('changes the frame rate and keeps the duration', async () => {
    const r = await runMedia(dir, 'change-fps', [clip], { fps: 10 });
    const p = ffprobe(r.path);
    assert.equal(fps(p), 10);
    assert.ok(Math.abs(Number(p.format.duration) - 2) < 0.15);
    assert.ok(Math.abs(frameCount(r.path) - 20) <= 1);
  });
  it('doubles the speed keeping the pitch, or shifting it', async () => {
    const src = makeVideo(dir, 'tone.mp4', { durationS: 2, freq: 500 });
    const r = await runMedia(dir, 'video-speed', [src], { factor: 2, keepPitch: true });
    const d = duration(r.path);
    assert.ok(Math.abs(d - 1) < 0.15, `duration ${d}`);
    const hz = zeroCrossingHz(r.path, 0.2, 0.5);
    assert.ok(Math.abs(hz - 500) < 25, `pitch kept: ${hz}`);
    const r2 = await runMedia(dir, 'video-speed', [src], { factor: 2, keepPitch: false });
    const hz2 = zeroCrossingHz(r2.path, 0.2, 0.5);
    assert.ok(Math.abs(hz2 - 1000) < 50, `pitch doubled: ${hz2}`);
  });
  it('reverses: the first output frame is the last source frame', async () => {
    const r = await runMedia(dir, 'reverse-video', [clip]);
    const first = frameRgb(r.path, 0);
    const lastSrc = frameRgb(clip, 1.96);
    const firstSrc = frameRgb(clip, 0);
    const dLast = frameDiff(first, lastSrc);
    const dFirst = frameDiff(first, firstSrc);
    assert.ok(dLast < 6 && dLast < dFirst / 2, `diff to last ${dLast}, to first ${dFirst}`);
    assert.ok(stream(ffprobe(r.path), 'audio'));
  });
  it('reverses long clips in chunks joined last-first (bounded memory)', async () => {
    process.env.KILN_REVERSE_MEMORY_MB = '0.5';
    try {
      const r = await runMedia(dir, 'reverse-video', [clip]);
      assert.equal(r.data?.chunks, 2);
      assert.equal(frameCount(r.path), 50);
      assert.ok(Math.abs(duration(r.path) - 2) < 0.15);
      assert.ok(frameDiff(frameRgb(r.path, 0), frameRgb(clip, 1.96)) < 6, 'starts with the last frame');
      assert.ok(frameDiff(frameRgb(r.path, 1.0), frameRgb(clip, 0.96)) < 6, 'second half starts with the end of the first chunk');
      assert.ok(frameDiff(frameRgb(r.path, 1.96), frameRgb(clip, 0)) < 6, 'ends with the first frame');
    } finally {
      delete process.env.KILN_REVERSE_MEMORY_MB;
    }
  });
  it('refuses inputs over 5 minutes before any work', async () => {
    const longSrc = makeVideo(dir, 'long6m.mp4', { width: 32, height: 32, fps: 1, durationS: 301, audio: false });
    const t = Date.now();
    await assert.rejects(runMedia(dir, 'reverse-video', [longSrc]), isCode('LIMIT_EXCEEDED'));
    assert.ok(Date.now() - t < 5000);
  });
});

describe('video-color / aspect-pad / blur-pad / watermark-video', () => {
  it('saturation 0 makes every pixel gray', async () => {
    const r = await runMedia(dir, 'video-color', [clip], { saturation: 0 });
    const f = frameRgb(r.path, 0.5);
    let maxSpread = 0;
    for (let i = 0; i < f.data.length; i += 3 * 37)
      maxSpread = Math.max(
        maxSpread,
        Math.max(f.data[i]!, f.data[i + 1]!, f.data[i + 2]!) - Math.min(f.data[i]!, f.data[i + 1]!, f.data[i + 2]!),
      );
    assert.ok(maxSpread < 12, `spread ${maxSpread}`);
  });
  it('pads to 9:16 with coloured bars', async () => {
    const r = await runMedia(dir, 'aspect-pad', [clip], { target: '9:16', color: '#ff0000' });
    const v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.width, v.height], [160, 286]);
    const f = frameRgb(r.path, 0.5);
    const top = (5 * 160 + 80) * 3;
    assert.ok(f.data[top]! > 200 && f.data[top + 1]! < 60 && f.data[top + 2]! < 60, `bar pixel ${[...f.data.subarray(top, top + 3)]}`);
  });
  // The one colour setting of kiln (tools/_shared/color.ts): a CSS name works here as in the image tools.
  it('takes a CSS colour name for the bars', async () => {
    const r = await runMedia(dir, 'aspect-pad', [clip], { target: '9:16', color: 'lime' });
    const f = frameRgb(r.path, 0.5);
    const top = (5 * 160 + 80) * 3;
    assert.ok(f.data[top]! < 60 && f.data[top + 1]! > 200 && f.data[top + 2]! < 60, `bar pixel ${[...f.data.subarray(top, top + 3)]}`);
  });
  it('blur-pads to 1:1 with a blurred background (not flat bars)', async () => {
    const r = await runMedia(dir, 'blur-pad', [clip], { target: '1:1', blur: 10 });
    const v = stream(ffprobe(r.path), 'video')!;
    assert.deepEqual([v.width, v.height], [160, 160]);
    const f = frameRgb(r.path, 0.5);
    const row = f.data.subarray(5 * 160 * 3, 6 * 160 * 3);
    const vals = new Set<number>();
    for (let i = 0; i < row.length; i += 3) vals.add(row[i]! >> 3);
    assert.ok(vals.size > 3, 'background carries the picture');
    assert.ok(stream(ffprobe(r.path), 'audio'));
  });
  it('burns text in the chosen corner only', async () => {
    const flat = makeVideo(dir, 'flat.mp4', { source: 'color=c=black', durationS: 1, width: 320, height: 240 });
    const r = await runMedia(dir, 'watermark-video', [flat], {
      text: 'KILN: 50% "x"',
      position: 'br',
      fontSize: 40,
      opacity: 1,
      color: '#ffffff',
    });
    const f = frameRgb(r.path, 0.5);
    const bright = (x0: number, x1: number, y0: number, y1: number) => {
      let n = 0;
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (f.data[(y * 320 + x) * 3]! > 128) n++;
      return n;
    };
    assert.ok(bright(160, 320, 180, 240) > 200, 'text bottom-right');
    assert.equal(bright(0, 160, 0, 120), 0, 'nothing top-left');
  });
  it("burns text at the colour's own alpha times opacity", async () => {
    const flat = makeVideo(dir, 'flat-alpha.mp4', { source: 'color=c=black', durationS: 1, width: 320, height: 240 });
    const peak = async (color: string, opacity: number) => {
      const r = await runMedia(dir, 'watermark-video', [flat], { text: 'KILN', position: 'br', fontSize: 60, opacity, color });
      const f = frameRgb(r.path, 0.5);
      let max = 0;
      for (let i = 0; i < f.data.length; i += 3) max = Math.max(max, f.data[i]!);
      return max;
    };
    const full = await peak('white', 1);
    const half = await peak('#ffffff80', 1);
    const quarter = await peak('#ffffff80', 0.5);
    assert.ok(full > 230, `opaque white peaks at ${full}`);
    assert.ok(half > 100 && half < 160, `half-alpha white peaks at ${half}`);
    assert.ok(quarter > 45 && quarter < 95, `half alpha at opacity 0.5 peaks at ${quarter}`);
  });
});

describe('stabilize-video', () => {
  // One still frame of testsrc2, cropped at an offset that jumps every frame: a shaking camera over a still scene.
  const shakyClip = (name: string) => {
    const p = path.join(dir, name);
    const jitter = "crop=w=160:h=120:x='80+6*sin(n*2.3)':y='60+6*sin(n*3.1+1)'";
    execFileSync('ffmpeg', [
      ...[
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        `testsrc2=s=320x240:r=25:d=1,trim=end_frame=1,loop=loop=24:size=1,${jitter},setpts=N/25/TB`,
      ],
      ...['-f', 'lavfi', '-i', 'sine=f=440:r=48000:d=1', '-ac', '2', '-shortest'],
      ...['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', p],
    ]);
    return p;
  };
  // Mean absolute grey-level change between consecutive frames, in the middle of the picture.
  const motion = (file: string) => {
    const [w, h] = [160, 120];
    const d = execFileSync('ffmpeg', ['-v', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'], { maxBuffer: 1 << 26 });
    let sum = 0;
    let count = 0;
    for (let f = 1; f < d.length / (w * h); f++)
      for (let y = 30; y < 90; y++)
        for (let x = 40; x < 120; x++, count++) sum += Math.abs(d[f * w * h + y * w + x]! - d[(f - 1) * w * h + y * w + x]!);
    return sum / count;
  };

  it('removes the shake (a plain re-encode would not) and keeps size, frames and audio', async () => {
    const shaky = shakyClip('shaky.mp4');
    const r = await runMedia(dir, 'stabilize-video', [shaky], { smoothing: 5 });
    const p = ffprobe(r.path);
    assert.deepEqual([stream(p, 'video')!.width, stream(p, 'video')!.height], [160, 120]);
    assert.equal(frameCount(r.path), 25);
    assert.ok(stream(p, 'audio'));
    const [before, afterwards] = [motion(shaky), motion(r.path)];
    assert.ok(before > 5, `the input shakes: ${before}`);
    assert.ok(afterwards < before * 0.3, `motion between frames ${before} -> ${afterwards}`);
    assert.ok(r.progress.some((x) => x > 0 && x < 45) || r.progress.some((x) => x >= 45 && x < 100), r.progress.join(','));
  });
  it('takes odd sides and packed RGB, which libvidstab aborts on (exit 128)', async () => {
    const odd = oddClip('odd-stab.mp4', ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv444p']);
    const rgb = makeVideo(dir, 'rgb-stab.mkv', { durationS: 1, audio: false, extra: ['-c:v', 'ffv1', '-pix_fmt', 'bgr0'] });
    for (const [file, size] of [
      [odd, [100, 74]],
      [rgb, [160, 120]],
    ] as const) {
      const r = await runMedia(dir, 'stabilize-video', [file], { smoothing: 5 });
      const v = stream(ffprobe(r.path), 'video')!;
      assert.deepEqual([v.width, v.height], size, file);
      assert.equal(frameCount(r.path), 25, file);
    }
  });
});
