import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { readZip } from '../../helpers/zip.js';
import { duration, ffprobe, makeAudio, makeVideo, runMedia, samples, stream } from '../../helpers/media.js';

const dir = tempDir();
const audio = (p: string) => stream(ffprobe(p), 'audio')!;
const isCode = (code: string, reason?: string) => (e: KilnError) => e.code === code && (reason === undefined || e.reason === reason);

describe('audio inputs at the edges of what encoders take', () => {
  it('writes OGG Vorbis at any sample rate, channel count and bitrate in range', async () => {
    // libvorbis's managed-bitrate mode refuses most of these ("encoder setup failed").
    for (const [rate, channels, bitrateKbps] of [
      [8000, 1, 192],
      [192000, 2, 192],
      [44100, 1, 320],
      [44100, 2, 32],
    ] as const) {
      const src = makeAudio(dir, `v${rate}-${channels}-${bitrateKbps}.wav`, { rate, channels, durationS: 0.5 });
      const r = await runMedia(dir, 'convert-audio', [src], { format: 'ogg', bitrateKbps });
      assert.equal(audio(r.path).codec_name, 'vorbis');
      assert.equal(audio(r.path).channels, channels);
      assert.ok(Math.abs(duration(r.path) - 0.5) < 0.05, `${rate} Hz: ${duration(r.path)} s`);
    }
  });

  it('says so when MP3 takes a 5.1 source down to stereo, and not for stereo', async () => {
    const surround = path.join(dir, 'surround.wav');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=440:d=0.5'],
      ...['-af', 'pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0', surround],
    ]);
    const r = await runMedia(dir, 'convert-audio', [surround], { format: 'mp3' });
    assert.equal(audio(r.path).channels, 2);
    assert.deepEqual(r.data?.warnings, ['6 audio channels downmixed to stereo: MP3 holds at most two']);
    const stereo = await runMedia(dir, 'convert-audio', [makeAudio(dir, 'st.wav', { durationS: 0.5 })], { format: 'mp3' });
    assert.equal(stereo.data?.warnings, undefined);
  });
});

/** A 1 s tone in `name` (mp3, flac or m4a) with a PNG cover and a title tag. */
function withCover(name: string): string {
  const png = path.join(dir, 'cover.png');
  execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=red:s=32x32', '-frames:v', '1', png]);
  const p = path.join(dir, name);
  execFileSync('ffmpeg', [
    ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=440:d=1', '-i', png, '-map', '0', '-map', '1'],
    ...['-c:v', 'png', '-disposition:v', 'attached_pic', '-metadata', 'title=Cover song', p],
  ]);
  return p;
}
const cover = (p: string) => ffprobe(p).streams.find((s) => s.codec_type === 'video' && s.disposition?.attached_pic === 1);
const title = (p: string) => ffprobe(p).format.tags?.title;

describe('cover art and tags', () => {
  it('go with the audio through a re-encode and a conversion, wherever the format holds them', async () => {
    // Every tool but audio-metadata on MP3 mapped the audio alone: the cover was dropped without a word.
    const flac = withCover('song.flac');
    const m4a = withCover('song.m4a');
    const loud = await runMedia(dir, 'volume-adjust', [flac], { gainDb: -3 });
    assert.ok(cover(loud.path), 'volume-adjust flac');
    assert.equal(title(loud.path), 'Cover song');
    for (const format of ['mp3', 'flac', 'm4a'] as const) {
      const r = await runMedia(dir, 'convert-audio', [m4a], { format });
      assert.equal(cover(r.path)?.codec_name, 'png', format);
      assert.equal(r.data?.warnings, undefined, format);
    }
    const ogg = await runMedia(dir, 'convert-audio', [flac], { format: 'ogg' });
    assert.equal(cover(ogg.path), undefined);
    assert.deepEqual(ogg.data?.warnings, ['cover art (stream 1, png) left out: OGG holds no cover art']);
  });
  it('split-audio keeps the tags and the cover in every piece', async () => {
    // Its pieces were written with -vn: the album art went, without a word, while every other audio tool kept it.
    const pieces = await runMedia(dir, 'split-audio', [withCover('album.flac')], { mode: 'parts', parts: 2 });
    const zip = await readZip(pieces.path);
    for (const name of ['part-000.flac', 'part-001.flac']) {
      const piece = path.join(dir, `album-${name}`);
      writeFileSync(piece, zip.get(name)!);
      assert.equal(cover(piece)?.codec_name, 'png', name);
      assert.equal(title(piece), 'Cover song', name);
    }
  });
  it('audio-metadata keeps the cover of FLAC and M4A when it sets a tag, and strip removes it', async () => {
    for (const name of ['tagged.flac', 'tagged.m4a']) {
      const src = withCover(name);
      const r = await runMedia(dir, 'audio-metadata', [src], { title: 'New' });
      assert.ok(cover(r.path), name);
      assert.equal((r.data?.tags as Record<string, string> | undefined)?.title, 'New');
      const stripped = await runMedia(dir, 'audio-metadata', [src], { strip: true });
      assert.equal(cover(stripped.path), undefined, name);
    }
  });
});

describe('audio with no samples, or too few', () => {
  it('a WAV with no samples is refused by name, not written as an empty file nor an INTERNAL fade error', async () => {
    // convert-audio, volume-adjust, trim-audio… wrote a 78-byte header-only WAV; fade-audio failed on afade st=-1.
    const empty = path.join(dir, 'empty.wav');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anullsrc', '-t', '0', '-c:a', 'pcm_s16le', empty]);
    await assert.rejects(runMedia(dir, 'convert-audio', [empty], { format: 'mp3' }), isCode('UNSUPPORTED_INPUT', 'empty-output'));
    await assert.rejects(runMedia(dir, 'volume-adjust', [empty], { gainDb: 3 }), isCode('UNSUPPORTED_INPUT', 'empty-output'));
    await assert.rejects(runMedia(dir, 'fade-audio', [empty], { fadeInS: 1, fadeOutS: 1 }), isCode('UNSUPPORTED_INPUT', 'no-duration'));
  });
  it('silence-removal of nothing but silence says so instead of writing an empty file', async () => {
    const silent = makeAudio(dir, 'silent.wav', { volume: 0, durationS: 2 });
    await assert.rejects(runMedia(dir, 'silence-removal', [silent]), isCode('UNSUPPORTED_INPUT', 'all-silent'));
  });
  it('pitch-shift refuses a 0.01 s clip by name (rubberband failed INTERNAL) and shifts a 0.05 s one', async () => {
    const blip = makeAudio(dir, 'blip.wav', { durationS: 0.01 });
    await assert.rejects(runMedia(dir, 'pitch-shift', [blip], { semitones: 12 }), isCode('UNSUPPORTED_INPUT', 'audio-too-short'));
    const short = makeAudio(dir, 'short.wav', { durationS: 0.05, rate: 8000 });
    const r = await runMedia(dir, 'pitch-shift', [short], { semitones: -12 });
    assert.ok(Math.abs(duration(r.path) - 0.05) < 0.02, `${duration(r.path)} s`);
  });
});

describe('WAV sample depth', () => {
  it('a 24-bit or float WAV stays 24-bit or float through a same-format tool', async () => {
    // transcodeAudio wrote every WAV as 16-bit PCM: a gain on a 24-bit master silently cut it to 16 bits.
    for (const [codec, tool, settings] of [
      ['pcm_s24le', 'volume-adjust', { gainDb: -3 }],
      ['pcm_f32le', 'fade-audio', { fadeInS: 0.1, fadeOutS: 0.1 }],
      ['pcm_u8', 'trim-audio', { startS: 0, endS: 0.2 }],
    ] as const) {
      const src = makeAudio(dir, `${codec}.wav`, { durationS: 0.5, extra: ['-c:a', codec] });
      const r = await runMedia(dir, tool, [src], settings);
      assert.equal(audio(r.path).codec_name, codec === 'pcm_u8' ? 'pcm_s16le' : codec, tool);
    }
    const pieces = await runMedia(dir, 'split-audio', [makeAudio(dir, 'deep.wav', { durationS: 2, extra: ['-c:a', 'pcm_s24le'] })], {
      mode: 'parts',
      parts: 2,
    });
    const zip = await readZip(pieces.path);
    assert.equal(zip.size, 2);
    const first = path.join(dir, 'deep-piece.wav');
    writeFileSync(first, zip.get('part-000.wav')!);
    assert.equal(audio(first).codec_name, 'pcm_s24le');
  });
});

describe('a truncated file whose header claims the whole length', () => {
  /** A 4 s tone cut to the first half of its bytes: the FLAC header still says 4 s. */
  function truncatedFlac(): string {
    const whole = makeAudio(dir, 'whole.flac', { durationS: 4, channels: 1 });
    const bytes = readFileSync(whole);
    const p = path.join(dir, 'truncated.flac');
    writeFileSync(p, bytes.subarray(0, Math.floor(bytes.length / 2)));
    assert.ok(duration(p) > 3.9, 'ffprobe takes the claim');
    return p;
  }
  const rms = (s: Int16Array) => Math.sqrt(s.reduce((a, x) => a + x * x, 0) / Math.max(1, s.length));

  it('fade-audio fades out where the sound ends, and says the file is shorter than it claims', async () => {
    // The fade-out was placed from the claimed end (3.5-4 s), after the last sample: it was never heard.
    const src = truncatedFlac();
    const r = await runMedia(dir, 'fade-audio', [src], { fadeInS: 0, fadeOutS: 0.5 });
    const len = duration(r.path);
    assert.ok(len > 1 && len < 3, `${len} s`);
    const middle = rms(samples(r.path, len / 3, 0.2));
    const tail = rms(samples(r.path, len - 0.06, 0.05));
    assert.ok(tail < middle * 0.15, `tail ${tail} vs middle ${middle}`);
    assert.match(String(r.data?.warnings), /truncated\.flac claims 4\.00 s but its audio ends at \d\.\d\d s/);
  });
  it('split-audio cuts the sound there is into equal parts', async () => {
    // Cut at the claimed middle (2 s), the last part started after the data and came out empty (empty-output).
    const r = await runMedia(dir, 'split-audio', [truncatedFlac()], { mode: 'parts', parts: 2 });
    const zip = await readZip(r.path);
    const lens = ['part-000.flac', 'part-001.flac'].map((name) => {
      const piece = path.join(dir, `trunc-${name}`);
      writeFileSync(piece, zip.get(name)!);
      return duration(piece);
    });
    assert.ok(Math.abs(lens[0]! - lens[1]!) < 0.05 && lens[0]! > 0.5, String(lens));
  });
});

describe('chapters on a changed timeline', () => {
  /** `src` with two chapters (0-1 s 'One', 1-2 s 'Two = b;c') in an output of the same extension. */
  function withChapters(src: string, name: string): string {
    const meta = path.join(dir, `${name}.ffmeta`);
    writeFileSync(
      meta,
      ';FFMETADATA1\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=0\nEND=1000\ntitle=One\n[CHAPTER]\nTIMEBASE=1/1000\nSTART=1000\nEND=2000\ntitle=Two \\= b\\;c\n',
    );
    const p = path.join(dir, name);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', src, '-i', meta, '-map', '0', '-map_chapters', '1', '-c', 'copy', p]);
    return p;
  }
  const chapters = (p: string) =>
    (
      JSON.parse(execFileSync('ffprobe', ['-v', 'error', '-of', 'json', '-show_chapters', p], { encoding: 'utf8' })) as {
        chapters: { start_time: string; end_time: string; tags?: { title?: string } }[];
      }
    ).chapters.map((c) => [Number(c.start_time), Number(c.end_time), c.tags?.title]);

  it('audio-speed and video-speed move the chapters with the sound and picture', async () => {
    // ffmpeg copied the chapters at their old times: a 2x faster audiobook's second chapter began at its very end.
    const book = withChapters(makeAudio(dir, 'book.m4a', { durationS: 2, channels: 1 }), 'chaptered.m4a');
    const fast = await runMedia(dir, 'audio-speed', [book], { factor: 2 });
    assert.deepEqual(chapters(fast.path), [
      [0, 0.5, 'One'],
      [0.5, 1, 'Two = b;c'],
    ]);
    const film = withChapters(makeVideo(dir, 'film.mkv', { durationS: 2 }), 'chaptered.mkv');
    const slow = await runMedia(dir, 'video-speed', [film], { factor: 0.5 });
    assert.deepEqual(chapters(slow.path), [
      [0, 2, 'One'],
      [2, 4, 'Two = b;c'],
    ]);
  });
  it('reverse-audio and reverse-video turn the chapters around with the sound and picture', async () => {
    // They kept 'One' at 0-1 s, over what had been the second chapter's sound.
    const book = withChapters(makeAudio(dir, 'rbook.m4a', { durationS: 2, channels: 1 }), 'rchaptered.m4a');
    const film = withChapters(makeVideo(dir, 'rfilm.mkv', { durationS: 2 }), 'rchaptered.mkv');
    for (const [tool, src] of [
      ['reverse-audio', book],
      ['reverse-video', film],
    ] as const) {
      const got = chapters((await runMedia(dir, tool, [src])).path);
      assert.deepEqual(
        got.map((c) => c[2]),
        ['Two = b;c', 'One'],
        tool,
      );
      assert.ok(Math.abs(Number(got[0]![0])) < 0.1 && Math.abs(Number(got[1]![0]) - 1) < 0.1, `${tool}: ${JSON.stringify(got)}`);
    }
  });
});
