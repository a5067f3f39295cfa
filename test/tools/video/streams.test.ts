import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { tempDir } from '../../helpers/fixtures.js';
import { ffprobe, integratedLufs, makeSrt, runMedia, zeroCrossingHz } from '../../helpers/media.js';

// Video tools other than convert-video/compress-video kept only the first audio track (and no subtitles)
// of a multi-track input: a second language was lost without a word.
const dir = tempDir();
let mkv: string;
let mp4: string;
let srt: string;

/** video, audio (440 Hz), audio (880 Hz, deu), a text subtitle (fra). */
function tracks(name: string, subCodec: string, durationS = 1): string {
  const p = path.join(dir, name);
  execFileSync('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', `testsrc=s=64x48:r=10:d=${durationS}`],
    ...['-f', 'lavfi', '-i', `sine=f=440:d=${durationS}`, '-f', 'lavfi', '-i', `sine=f=880:d=${durationS}`, '-i', srt],
    ...['-map', '0', '-map', '1', '-map', '2', '-map', '3', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p'],
    ...['-c:a', 'aac', '-c:s', subCodec, '-metadata:s:a:1', 'language=deu', '-metadata:s:s:0', 'language=fra', p],
  ]);
  return p;
}

const types = (file: string) => ffprobe(file).streams.map((s) => s.codec_type);
const language = (file: string, i: number) => ffprobe(file).streams[i]!.tags?.language;

before(() => {
  srt = makeSrt(dir, 'tracks.srt', [{ start: 0, end: 1, text: 'Hello tracks' }]);
  mkv = tracks('tracks.mkv', 'srt');
  mp4 = tracks('tracks.mp4', 'mov_text');
});

describe('video tools keep every audio track and the subtitle tracks', () => {
  it('re-encoding tools (a -vf chain and a filter graph) keep them all', async () => {
    for (const [tool, settings] of [
      ['rotate-video', { transform: 'cw90' }],
      ['blur-pad', { target: '1:1', blur: 4 }],
    ] as const) {
      const r = await runMedia(dir, tool, [mkv], settings);
      assert.deepEqual(types(r.path), ['video', 'audio', 'audio', 'subtitle'], tool);
      assert.equal(language(r.path, 2), 'deu', tool);
      assert.equal(language(r.path, 3), 'fra', tool);
      assert.equal(r.data?.warnings, undefined, tool);
    }
  });
  it('video-speed and reverse-video keep every audio track and name the subtitles they leave out', async () => {
    for (const tool of ['video-speed', 'reverse-video']) {
      const r = await runMedia(dir, tool, [mp4]);
      assert.deepEqual(types(r.path), ['video', 'audio', 'audio'], tool);
      assert.equal(language(r.path, 2), 'deu', tool);
      assert.match(
        String((r.data?.warnings as string[] | undefined)?.[0]),
        /^subtitle stream 3 \(mov_text\) left out: its cue times/,
        tool,
      );
    }
  });
  it('video-speed without keepPitch changes every audio track by the factor, whatever its sample rate', async () => {
    // 440 Hz at 48 kHz and at 22.05 kHz: asetrate at the first track's rate made the second 4.4× faster.
    const p = path.join(dir, 'two-rates.mkv');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=s=64x48:r=10:d=1'],
      ...['-f', 'lavfi', '-i', 'sine=f=440:d=1:sample_rate=48000', '-f', 'lavfi', '-i', 'sine=f=440:d=1:sample_rate=22050'],
      ...['-map', '0', '-map', '1', '-map', '2', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'flac', p],
    ]);
    const r = await runMedia(dir, 'video-speed', [p], { factor: 2, keepPitch: false });
    for (const track of [0, 1]) {
      const wav = path.join(dir, `two-rates-${track}.wav`);
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', r.path, '-map', `0:a:${track}`, '-ac', '1', '-ar', '44100', wav]);
      const hz = zeroCrossingHz(wav, 0.05, 0.3);
      assert.ok(Math.abs(hz - 880) < 30, `track ${track + 1}: ${hz} Hz, not 880`);
    }
  });

  it('reverse-video in chunks keeps every audio track too', async () => {
    const clip = tracks('tracks2s.mp4', 'mov_text', 2);
    process.env.KILN_REVERSE_MEMORY_MB = '0.04';
    try {
      const r = await runMedia(dir, 'reverse-video', [clip]);
      assert.equal(r.data?.chunks, 2);
      assert.deepEqual(types(r.path), ['video', 'audio', 'audio']);
      assert.equal((r.data?.warnings as string[] | undefined)?.length, 1);
    } finally {
      delete process.env.KILN_REVERSE_MEMORY_MB;
    }
  });
  it('trim-video keeps them in copy mode and in precise mode', async () => {
    for (const precise of [false, true]) {
      const r = await runMedia(dir, 'trim-video', [mp4], { startS: 0, endS: 0.5, precise });
      assert.deepEqual(types(r.path), ['video', 'audio', 'audio', 'subtitle'], `precise ${precise}`);
      assert.equal(language(r.path, 2), 'deu');
      assert.equal(language(r.path, 3), 'fra');
    }
  });
  it('embed-subtitles adds its track after the audio and subtitle tracks already there', async () => {
    const r = await runMedia(dir, 'embed-subtitles', [mp4], { language: 'ita' }, { extra: { file: [srt] } });
    assert.deepEqual(types(r.path), ['video', 'audio', 'audio', 'subtitle', 'subtitle']);
    assert.equal(language(r.path, 2), 'deu');
    assert.equal(language(r.path, 3), 'fra');
    assert.equal(language(r.path, 4), 'ita');
  });
  it('video-loudnorm normalizes every audio track on its own and keeps the subtitles', async () => {
    // Only the first track came out (measured on ffmpeg's own pick of track); the others and the subtitles were dropped.
    const r = await runMedia(dir, 'video-loudnorm', [mkv]);
    assert.deepEqual(types(r.path), ['video', 'audio', 'audio', 'subtitle']);
    assert.equal(language(r.path, 2), 'deu');
    for (const track of [0, 1]) {
      const wav = path.join(dir, `loud-${track}.wav`);
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', r.path, '-map', `0:a:${track}`, wav]);
      assert.ok(Math.abs(integratedLufs(wav) - -16) <= 1.5, `track ${track}: ${integratedLufs(wav)} LUFS`);
    }
  });
  it('video-loudnorm into another container (MPEG-TS to MP4) normalizes and keeps every audio track', async () => {
    // The re-encode path mapped the first audio track alone: the German track of a .ts was lost.
    const ts = path.join(dir, 'tracks.ts');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', mkv, '-map', '0:v', '-map', '0:a', '-c', 'copy', ts]);
    const r = await runMedia(dir, 'video-loudnorm', [ts]);
    assert.match(r.name, /\.mp4$/);
    assert.deepEqual(types(r.path), ['video', 'audio', 'audio']);
    for (const track of [0, 1]) {
      const wav = path.join(dir, `loud-ts-${track}.wav`);
      execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', r.path, '-map', `0:a:${track}`, wav]);
      assert.ok(Math.abs(integratedLufs(wav) - -16) <= 1.5, `track ${track}: ${integratedLufs(wav)} LUFS`);
      assert.ok(Math.abs(zeroCrossingHz(wav) - [440, 880][track]!) < 20, `track ${track}: ${zeroCrossingHz(wav)} Hz`);
    }
  });
  it("an MKV's attached font stays with its subtitles; MP4 names it left out", async () => {
    // Every re-encode, trim, embed and mute of an MKV dropped its attachments (the fonts its ASS subtitles are drawn with) without a word.
    const withFont = path.join(dir, 'font.mkv');
    const font = '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf';
    execFileSync('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-i',
      mkv,
      '-map',
      '0',
      '-c',
      'copy',
      '-attach',
      font,
      '-metadata:s:t',
      'mimetype=font/ttf',
      withFont,
    ]);
    const cases: [string, Record<string, unknown>][] = [
      ['convert-video', { format: 'mkv' }],
      ['resize-video', { width: 32 }],
      ['trim-video', { endS: 0.5 }],
      ['mute-video', {}],
      ['video-loudnorm', {}],
      // Its copy path mapped no attachment; mapped, its -map_metadata -1 took their filename and Matroska refused them.
      ['video-metadata', {}],
    ];
    for (const [tool, settings] of cases) {
      const r = await runMedia(dir, tool, [withFont], settings);
      const att = ffprobe(r.path).streams.find((s) => s.codec_type === 'attachment');
      assert.equal(att?.tags?.filename, 'DejaVuSans.ttf', tool);
    }
    const embedded = await runMedia(dir, 'embed-subtitles', [withFont], {}, { extra: { file: [srt] } });
    assert.ok(types(embedded.path).includes('attachment'), 'embed-subtitles');
    const mp4 = await runMedia(dir, 'convert-video', [withFont], { format: 'mp4' });
    assert.ok(!types(mp4.path).includes('attachment'));
    assert.match(String(mp4.data?.warnings), /attachment stream \d \(DejaVuSans\.ttf\) left out: only MKV/);
  });
  it('mute-video removes the sound and keeps the subtitle tracks', async () => {
    // The copy path passed -sn: muting a video also dropped its subtitles.
    for (const src of [mkv, mp4]) {
      const r = await runMedia(dir, 'mute-video', [src]);
      assert.deepEqual(types(r.path), ['video', 'subtitle'], src);
      assert.equal(language(r.path, 1), 'fra', src);
    }
  });
});
