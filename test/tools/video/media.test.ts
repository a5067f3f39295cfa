import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, before } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { CJK_CSV } from '../../helpers/cjk-text.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import {
  duration,
  ffprobe,
  fps,
  frameCount,
  frameDiff,
  frameRgb,
  integratedLufs,
  makeAudio,
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

async function zipEntries(p: string): Promise<string[]> {
  const yauzl = await import('yauzl');
  return new Promise((resolve, reject) => {
    yauzl.default.open(p, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const names: string[] = [];
      zip.on('entry', (e: { fileName: string }) => {
        names.push(e.fileName);
        zip.readEntry();
      });
      zip.on('end', () => resolve(names));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('video-to-gif / video-to-webp / gif-to-video', () => {
  it('makes a palette GIF of the requested size, rate and length', async () => {
    const r = await runMedia(dir, 'video-to-gif', [clip], { fps: 10, width: 80, startS: 0.5, durationS: 1 });
    const meta = await sharp(r.path, { animated: true }).metadata();
    assert.equal(meta.format, 'gif');
    assert.equal(meta.width, 80);
    assert.equal(meta.pageHeight, 60);
    assert.equal(meta.pages, 10);
    assert.equal(meta.loop, 0);
  });
  it('refuses durationS over 60 before any work', async () => {
    await assert.rejects(runMedia(dir, 'video-to-gif', [clip], { durationS: 61 }), isCode('LIMIT_EXCEEDED'));
    await assert.rejects(runMedia(dir, 'video-to-gif', [clip], { durationS: 0 }), isCode('VALIDATION_ERROR'));
    const { describeSettings } = await import('../../../src/core/settings.js');
    const { getTool } = await import('../../../src/tools/index.js');
    assert.equal(describeSettings(getTool('video-to-gif')).find((x) => x.name === 'durationS')?.max, 60);
  });
  it('makes an animated WebP; loop false plays once', async () => {
    const r = await runMedia(dir, 'video-to-webp', [clip], { fps: 5, width: 64, quality: 50, loop: false });
    const meta = await sharp(r.path, { animated: true }).metadata();
    assert.equal(meta.format, 'webp');
    assert.equal(meta.width, 64);
    assert.equal(meta.pages, 10);
    assert.equal(meta.loop, 1);
  });
  it('never enlarges a narrow video unless a width is asked for; the default width still caps a wide one', async () => {
    // A 64-px video became a 480-px GIF/WebP: the default width upscaled it.
    const small = makeVideo(dir, 'small.mp4', { width: 64, height: 48, durationS: 0.4, fps: 10, audio: false });
    const wide = makeVideo(dir, 'wide.mp4', { width: 640, height: 360, durationS: 0.2, fps: 10, audio: false });
    for (const tool of ['video-to-gif', 'video-to-webp'] as const) {
      const size = async (file: string, settings: Record<string, unknown>) => {
        const m = await sharp((await runMedia(dir, tool, [file], settings)).path, { animated: true }).metadata();
        return [m.width, m.pageHeight];
      };
      assert.deepEqual(await size(small, {}), [64, 48], tool);
      assert.deepEqual(await size(small, { width: 128 }), [128, 96], tool);
      assert.deepEqual(await size(wide, {}), [480, 270], tool);
    }
    const { describeSettings } = await import('../../../src/core/settings.js');
    const { getTool } = await import('../../../src/tools/index.js');
    assert.equal(describeSettings(getTool('video-to-gif')).find((x) => x.name === 'width')?.default, 480);
  });
  it('a one-frame video gives a one-frame GIF, WebP and change-fps output (was an empty GIF, exit 0)', async () => {
    const one = makeVideo(dir, 'one-frame.mp4', { durationS: 0.04, audio: false });
    assert.equal(frameCount(one), 1);
    for (const tool of ['video-to-gif', 'video-to-webp'] as const) {
      const meta = await sharp((await runMedia(dir, tool, [one], { width: 64 })).path, { animated: true }).metadata();
      assert.deepEqual([meta.width, meta.pages ?? 1], [64, 1], tool);
    }
    assert.equal(frameCount((await runMedia(dir, 'change-fps', [one], { fps: 1 })).path), 1);
  });
  it('turns a GIF into MP4 and WebM video', async () => {
    const gif = (await runMedia(dir, 'video-to-gif', [clip], { fps: 10, width: 81, durationS: 1 })).path;
    const r = await runMedia(dir, 'gif-to-video', [gif], { format: 'mp4' });
    const v = stream(ffprobe(r.path), 'video')!;
    assert.equal(v.codec_name, 'h264');
    assert.equal(v.width, 80);
    assert.ok(Math.abs(frameCount(r.path) - 10) <= 1);
    const w = await runMedia(dir, 'gif-to-video', [gif], { format: 'webm' });
    assert.equal(stream(ffprobe(w.path), 'video')!.codec_name, 'vp9');
  });
  it('shows each GIF frame for its own delay, the last one too (0.95 s of 5/20/70 cs delays became 0.4 s)', async () => {
    const colours = [
      [255, 0, 0],
      [0, 255, 0],
      [0, 0, 255],
    ];
    const raw = Buffer.concat(colours.map(([r, g, b]) => Buffer.from(Array.from({ length: 16 * 16 }, () => [r!, g!, b!]).flat())));
    const gif = `${dir}/delays.gif`;
    await sharp(raw, { raw: { width: 16, height: 48, channels: 3, pageHeight: 16 } })
      .gif({ delay: [50, 200, 700], loop: 0 })
      .toFile(gif);
    for (const format of ['mp4', 'webm']) {
      const out = (await runMedia(dir, 'gif-to-video', [gif], { format })).path;
      assert.ok(Math.abs(duration(out) - 0.95) < 0.03, `${format}: ${duration(out)} s`);
      // Which frame is on screen when: red from 0, green from 0.05 s, blue from 0.25 s to the end (frameRgb shows the first frame at or after t).
      const seen = [0, 0.15, 0.5, 0.9].map((t) => {
        const { data } = frameRgb(out, t);
        return [data[0]!, data[1]!, data[2]!].map((v) => (v > 128 ? 1 : 0)).join('');
      });
      assert.deepEqual(seen, ['100', '010', '001', '001'], format);
    }
  });
  it('refuses a GIF one pixel wide for H.264 by name, and makes it WebM', async () => {
    // A 1x1 tracking GIF: the even-sides crop left 0x0 and ffmpeg failed ("Error reinitializing filters", exit 1).
    const dot = await makeImage(dir, 'dot.gif', 1, 1, { format: 'gif' });
    for (const format of ['mp4', 'mov'])
      await assert.rejects(
        runMedia(dir, 'gif-to-video', [dot], { format }),
        (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && /dot\.gif is 1x1 pixels: .*H\.264.*at least 2/.test(e.message),
      );
    const w = stream(ffprobe((await runMedia(dir, 'gif-to-video', [dot], { format: 'webm' })).path), 'video')!;
    assert.deepEqual([w.codec_name, w.width, w.height], ['vp9', 1, 1]);
  });
});

describe('video-to-frames', () => {
  it('extracts every frame, every n-th, or given timestamps into a ZIP', async () => {
    const all = await runMedia(dir, 'video-to-frames', [clip], { mode: 'all' });
    assert.equal(all.name, 'clip.zip');
    assert.equal((await zipEntries(all.path)).filter((n) => n.endsWith('.png')).length, 50);
    const nth = await runMedia(dir, 'video-to-frames', [clip], { mode: 'nth', n: 10, format: 'jpg' });
    const names = await zipEntries(nth.path);
    assert.equal(names.length, 5);
    assert.ok(names.every((n) => n.endsWith('.jpg')));
    const ts = await runMedia(dir, 'video-to-frames', [clip], { mode: 'timestamps', timestamps: '0.2, 1.5' });
    assert.equal((await zipEntries(ts.path)).length, 2);
    await assert.rejects(runMedia(dir, 'video-to-frames', [clip], { mode: 'timestamps', timestamps: '' }), isCode('VALIDATION_ERROR'));
    await assert.rejects(runMedia(dir, 'video-to-frames', [clip], { mode: 'timestamps', timestamps: '1,abc' }), isCode('VALIDATION_ERROR'));
    await assert.rejects(runMedia(dir, 'video-to-frames', [clip], { mode: 'timestamps', timestamps: '9' }), isCode('VALIDATION_ERROR'));
  });
  it('a timestamp after the last frame starts but before the end gives the last frame (was ENOENT, exit 1)', async () => {
    // The 2 s clip at 25 fps: its last frame starts at 1.96 s; at 1.99 s an input seek decodes nothing.
    const r = await runMedia(dir, 'video-to-frames', [clip], { mode: 'timestamps', timestamps: '1,1.99' });
    const { readZip } = await import('../../helpers/zip.js');
    const files = await readZip(r.path);
    assert.deepEqual([...files.keys()].sort(), ['frame-001-1s.png', 'frame-002-1.99s.png']);
    const got = await sharp(files.get('frame-002-1.99s.png')!).removeAlpha().raw().toBuffer();
    const last = frameRgb(clip, 1.96);
    assert.ok(frameDiff(last, { data: got }) < 1, 'the last frame');
    assert.ok(frameDiff(frameRgb(clip, 1), { data: got }) > 1, 'not some other frame');
  });
});

describe('HDR input', () => {
  // PQ/HLG BT.2020 values went into the GIF, WebP and PNG as they were: a red of 192,32,32 came out 104,65,44.
  it('video-to-frames, video-to-gif and video-to-webp tone-map HDR10 and HLG to SDR colours', async () => {
    const { execFileSync } = await import('node:child_process');
    for (const trc of ['smpte2084', 'arib-std-b67']) {
      const hdr = path.join(dir, `hdr-${trc}.mp4`);
      const vf = `zscale=tin=bt709:t=${trc}:pin=bt709:p=bt2020:min=bt709:m=bt2020nc:rin=tv:r=tv:npl=100,format=yuv420p10le`;
      execFileSync('ffmpeg', [
        ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=c=0xC02020:s=64x48:r=10:d=1', '-vf', vf],
        ...['-c:v', 'libx264', '-preset', 'ultrafast', '-color_primaries', 'bt2020', '-color_trc', trc, '-colorspace', 'bt2020nc', hdr],
      ]);
      const near = async (buf: Buffer, what: string) => {
        const { data } = await sharp(buf).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        const [r, g, b] = [data[0]!, data[1]!, data[2]!];
        assert.ok(Math.abs(r - 192) <= 20 && g <= 55 && b <= 55, `${trc} ${what}: ${r},${g},${b} (SDR red is 192,32,32)`);
      };
      const frame = await runMedia(dir, 'video-to-frames', [hdr], { mode: 'timestamps', timestamps: '0.5' });
      await near(readFileSync(frame.path), 'PNG frame');
      await near(readFileSync((await runMedia(dir, 'video-to-gif', [hdr], { durationS: 0.5 })).path), 'GIF');
      await near(readFileSync((await runMedia(dir, 'video-to-webp', [hdr], {})).path), 'WebP');
      // Re-encodes into 8-bit H.264 / VP9 kept the HDR tags on 8-bit pictures (PQ showed washed out):
      // they are tone-mapped too, and tagged BT.709.
      for (const [tool, settings] of [
        ['convert-video', { format: 'mp4' }],
        ['compress-video', {}],
        ['convert-video', { format: 'webm' }],
        ['trim-video', { startS: 0, endS: 1, precise: true }],
      ] as const) {
        const out = (await runMedia(dir, tool, [hdr], settings)).path;
        const v = stream(ffprobe(out), 'video')!;
        const what = `${trc} ${tool} ${JSON.stringify(settings)}`;
        assert.deepEqual([v.color_transfer, v.color_primaries], ['bt709', 'bt709'], what);
        const { data } = frameRgb(out, 0.5);
        const [r, g, b] = [data[(24 * 64 + 32) * 3]!, data[(24 * 64 + 32) * 3 + 1]!, data[(24 * 64 + 32) * 3 + 2]!];
        assert.ok(Math.abs(r - 192) <= 24 && g <= 60 && b <= 60, `${what}: ${r},${g},${b} (SDR red is 192,32,32)`);
      }
    }
  });
});

describe('merge-videos / images-to-video', () => {
  it("normalizes clips to the first one's size and rate and joins them", async () => {
    const b = makeVideo(dir, 'b.webm', { width: 320, height: 320, fps: 30, durationS: 1 });
    const c = makeVideo(dir, 'c.mp4', { width: 80, height: 60, fps: 15, durationS: 1, audio: false });
    const r = await runMedia(dir, 'merge-videos', [clip, b, c]);
    const p = ffprobe(r.path);
    const v = stream(p, 'video')!;
    assert.deepEqual([v.codec_name, v.width, v.height], ['h264', 160, 120]);
    assert.equal(fps(p), 25);
    assert.equal(stream(p, 'audio')!.codec_name, 'aac');
    assert.equal(Number(stream(p, 'audio')!.sample_rate), 48000);
    const d = Number(p.format.duration);
    assert.ok(Math.abs(d - 4) < 0.2, `duration ${d}`);
    assert.ok(Math.abs(frameCount(r.path) - 100) <= 2);
  });
  it('refuses a single clip', async () => {
    await assert.rejects(runMedia(dir, 'merge-videos', [clip]), isCode('VALIDATION_ERROR'));
  });
  it('builds a slideshow with the chosen size, rate and length', async () => {
    const a = await makeImage(dir, 'a.png', 300, 200);
    const b = await makeImage(dir, 'b.jpg', 100, 400);
    const r = await runMedia(dir, 'images-to-video', [a, b], { secondsPerImage: 0.5, resolution: 'square', fps: 10 });
    const p = ffprobe(r.path);
    const v = stream(p, 'video')!;
    assert.deepEqual([v.codec_name, v.width, v.height], ['h264', 1080, 1080]);
    assert.equal(fps(p), 10);
    assert.equal(frameCount(r.path), 10);
    assert.equal(stream(p, 'audio'), undefined);
    // First slide red on the left, second slide (tall) centred with black beside it.
    const f1 = frameRgb(r.path, 0.2);
    const px = (f: { data: Buffer }, x: number, y: number) => [...f.data.subarray((y * 1080 + x) * 3, (y * 1080 + x) * 3 + 3)];
    assert.ok(px(f1, 200, 540)[0]! > 200);
    const f2 = frameRgb(r.path, 0.8);
    assert.ok(px(f2, 50, 540)[0]! < 30 && px(f2, 50, 540)[2]! < 30, 'letterbox black');
  });
});

describe('replace-audio / extract-audio / video-loudnorm / mute', () => {
  it('replaces the audio track, copying the video', async () => {
    const tone = makeAudio(dir, 'a.wav', { freq: 1000, durationS: 3 });
    const r = await runMedia(dir, 'replace-audio', [clip], {}, { extra: { file: [tone] } });
    const p = ffprobe(r.path);
    assert.equal(stream(p, 'audio')!.codec_name, 'aac');
    assert.ok(Math.abs(Number(p.format.duration) - 2) < 0.1, 'cut to the video length');
    const hz = zeroCrossingHz(r.path, 0.5, 0.5);
    assert.ok(Math.abs(hz - 1000) < 30, `new audio ${hz}`);
  });
  it('refuses replacement audio without an audio stream', async () => {
    const silentVideo = makeVideo(dir, 'noaudio.mp4', { audio: false, durationS: 1 });
    await assert.rejects(runMedia(dir, 'replace-audio', [clip], {}, { extra: { file: [silentVideo] } }), isCode('UNSUPPORTED_INPUT'));
  });
  it('extracts audio in each format', async () => {
    for (const [format, codec] of [
      ['mp3', 'mp3'],
      ['wav', 'pcm_s16le'],
      ['m4a', 'aac'],
      ['ogg', 'vorbis'],
    ] as const) {
      const r = await runMedia(dir, 'extract-audio', [clip], { format });
      const p = ffprobe(r.path);
      assert.equal(r.name, `clip.${format}`);
      assert.equal(stream(p, 'video'), undefined);
      assert.equal(stream(p, 'audio')!.codec_name, codec);
      assert.ok(Math.abs(Number(p.format.duration) - 2) < 0.15);
    }
  });
  it('normalizes the loudness of a video to -16 LUFS (two passes)', async () => {
    const quiet = makeVideo(dir, 'quiet.mp4', { durationS: 3, extra: ['-af', 'volume=-20dB'] });
    const before = integratedLufs(quiet);
    const r = await runMedia(dir, 'video-loudnorm', [quiet]);
    const lufs = integratedLufs(r.path);
    assert.ok(Math.abs(lufs - -16) <= 1, `before ${before}, after ${lufs}`);
    assert.equal(stream(ffprobe(r.path), 'video')!.codec_name, 'h264');
  });
});

describe('subtitles', () => {
  let srt: string;
  before(() => {
    srt = makeSrt(dir, 'subs.srt', [
      { start: 0, end: 1, text: 'Hello' },
      { start: 1, end: 2, text: 'World' },
    ]);
  });
  it('burns subtitles: pixels in the bottom area change, the top stays', async () => {
    const flat = makeVideo(dir, 'flat.mp4', { source: 'color=c=blue', durationS: 2, width: 320, height: 240 });
    const r = await runMedia(dir, 'burn-subtitles', [flat], { fontSize: 40 }, { extra: { file: [srt] } });
    const a = frameRgb(flat, 0.5);
    const b = frameRgb(r.path, 0.5);
    assert.ok(frameDiff(a, b, 160, 240) > 3, `bottom changed ${frameDiff(a, b, 160, 240)}`);
    assert.ok(frameDiff(a, b, 0, 100) < 2, `top unchanged ${frameDiff(a, b, 0, 100)}`);
  });
  it('embeds a soft track (mov_text in MP4, SRT in MKV) and extracts it back', async () => {
    const r = await runMedia(dir, 'embed-subtitles', [clip], { language: 'deu' }, { extra: { file: [srt] } });
    const s = stream(ffprobe(r.path), 'subtitle')!;
    assert.equal(s.codec_name, 'mov_text');
    assert.equal(s.tags?.language, 'deu');
    assert.equal(stream(ffprobe(r.path), 'video')!.codec_name, 'h264');
    const mkv = makeVideo(dir, 'clip.mkv', { durationS: 2 });
    const r2 = await runMedia(dir, 'embed-subtitles', [mkv], {}, { extra: { file: [srt] } });
    const s2 = stream(ffprobe(r2.path), 'subtitle')!;
    assert.deepEqual([s2.codec_name, s2.tags?.language], ['subrip', 'eng']);
    const back = await runMedia(dir, 'extract-subtitles', [r.path]);
    assert.match(back.name, /\.srt$/);
    const text = readFileSync(back.path, 'utf8');
    assert.match(text, /00:00:00,000 --> 00:00:01,000\s+Hello/);
    assert.match(text, /World/);
    await assert.rejects(
      runMedia(dir, 'embed-subtitles', [clip], { language: 'German' }, { extra: { file: [srt] } }),
      isCode('VALIDATION_ERROR'),
    );
  });
  it('reads a WebVTT file with a STYLE block, a Windows-1252 SRT and a cue ending before it starts (were no cues, exit 3, INTERNAL)', async () => {
    const vtt = path.join(dir, 'styled.vtt');
    writeFileSync(vtt, 'WEBVTT\n\nSTYLE\n::cue { color: yellow }\n\n00:00.000 --> 00:01.800\nStyled cue\n');
    const embedded = await runMedia(dir, 'embed-subtitles', [clip], {}, { extra: { file: [vtt] } });
    const back = await runMedia(dir, 'extract-subtitles', [embedded.path]);
    assert.match(readFileSync(back.path, 'utf8'), /Styled cue/);
    const flat = makeVideo(dir, 'flat-vtt.mp4', { source: 'color=c=blue', durationS: 1, width: 320, height: 240, audio: false });
    const burned = await runMedia(dir, 'burn-subtitles', [flat], { fontSize: 40 }, { extra: { file: [vtt] } });
    assert.ok(frameDiff(frameRgb(flat, 0.5), frameRgb(burned.path, 0.5), 160, 240) > 3, 'the styled cue is burned in');

    const latin = path.join(dir, 'latin1.srt');
    // 0x80 is € in Windows-1252 (node 20's TextDecoder('windows-1252') gives U+0080, ISO-8859-1's).
    writeFileSync(latin, Buffer.from('1\r\n00:00:00,000 --> 00:00:01,000\r\nH\xe9 l\xe0 5\x80\r\n', 'latin1'));
    const l = await runMedia(dir, 'embed-subtitles', [clip], {}, { extra: { file: [latin] } });
    assert.match(readFileSync((await runMedia(dir, 'extract-subtitles', [l.path])).path, 'utf8'), /Hé là 5€/);
    assert.match(String((l.data as { warnings?: string[] }).warnings), /Windows-1252/);
    // UTF-16 with a BOM (Windows' "Unicode" text) is read as such, not as Windows-1252.
    const wide = path.join(dir, 'wide.srt');
    writeFileSync(
      wide,
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('1\r\n00:00:00,000 --> 00:00:01,000\r\nÜber 字幕\r\n', 'utf16le')]),
    );
    const w = await runMedia(dir, 'embed-subtitles', [clip], {}, { extra: { file: [wide] } });
    assert.match(readFileSync((await runMedia(dir, 'extract-subtitles', [w.path])).path, 'utf8'), /Über 字幕/);
    assert.doesNotMatch(String((w.data as { warnings?: string[] } | undefined)?.warnings), /Windows-1252/);
    // A Japanese SRT saved by Notepad in Shift_JIS: read in it, and said so (the warning named only Windows-1252).
    const sjis = path.join(dir, 'japanese.srt');
    writeFileSync(sjis, Buffer.concat([Buffer.from('1\r\n00:00:00,000 --> 00:00:01,000\r\n', 'latin1'), CJK_CSV.shift_jis.bytes]));
    const j = await runMedia(dir, 'embed-subtitles', [clip], {}, { extra: { file: [sjis] } });
    assert.match(readFileSync((await runMedia(dir, 'extract-subtitles', [j.path])).path, 'utf8'), /山田太郎,東京,ありがとう/);
    assert.match(String((j.data as { warnings?: string[] }).warnings), /japanese\.srt is not UTF-8: read as Shift_JIS \(Japanese\)/);

    const backwards = makeSrt(dir, 'backwards.srt', [
      { start: 0, end: 1, text: 'Fine' },
      { start: 1.6, end: 1.2, text: 'Backwards' },
    ]);
    const b = await runMedia(dir, 'embed-subtitles', [clip], {}, { extra: { file: [backwards] } });
    const text = readFileSync((await runMedia(dir, 'extract-subtitles', [b.path])).path, 'utf8');
    assert.match(text, /Fine/);
    assert.doesNotMatch(text, /Backwards/);
    assert.match(String((b.data as { warnings?: string[] }).warnings), /ends before it starts/);
    const none = makeSrt(dir, 'none.srt', [{ start: 1.6, end: 1.2, text: 'Backwards' }]);
    await assert.rejects(runMedia(dir, 'embed-subtitles', [clip], {}, { extra: { file: [none] } }), isCode('UNSUPPORTED_INPUT'));
  });
  it('extract-subtitles refuses a video without subtitles', async () => {
    await assert.rejects(runMedia(dir, 'extract-subtitles', [clip]), isCode('UNSUPPORTED_INPUT'));
  });
});

describe('video-metadata', () => {
  it('removes container tags and keeps the streams', async () => {
    const tagged = makeVideo(dir, 'tagged.mp4', {
      extra: ['-metadata', 'title=Secret title', '-metadata', 'comment=GPS 52.1,4.3', '-metadata', 'artist=Someone'],
    });
    assert.equal(ffprobe(tagged).format.tags?.title, 'Secret title');
    const r = await runMedia(dir, 'video-metadata', [tagged]);
    const p = ffprobe(r.path);
    assert.equal(p.format.tags?.title, undefined);
    assert.equal(p.format.tags?.comment, undefined);
    assert.equal(p.format.tags?.artist, undefined);
    assert.ok(stream(p, 'video') && stream(p, 'audio'));
    assert.ok(Math.abs(duration(r.path) - 2) < 0.1);
    assert.ok((r.data!.removedTags as string[]).includes('title'));
  });
});
