import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { tempDir } from '../../helpers/fixtures.js';
import { readZip } from '../../helpers/zip.js';
import { duration, ffprobe, makeAudio, makeVideo, meanVolumeDb, runMedia, samples, stream } from '../../helpers/media.js';

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
  it('reverse-video in chunks keeps the title and turns the chapters around', async () => {
    // The chunks were joined from the concat list alone, which carries no file's tags: the title was lost.
    const film = withChapters(makeVideo(dir, 'tfilm.mkv', { durationS: 2, extra: ['-metadata', 'title=Holiday'] }), 'tchaptered.mkv');
    process.env.KILN_REVERSE_MEMORY_MB = '0.5';
    try {
      const r = await runMedia(dir, 'reverse-video', [film]);
      assert.equal(r.data?.chunks, 2);
      assert.equal(title(r.path), 'Holiday');
      assert.deepEqual(
        chapters(r.path).map((c) => c[2]),
        ['Two = b;c', 'One'],
      );
    } finally {
      delete process.env.KILN_REVERSE_MEMORY_MB;
    }
  });
});

describe('lossy re-encodes keep the container, codec and about the bitrate of the input', () => {
  /** Audio bitrate of `p` in kbit/s, from the size of its audio packets (Opus in OGG or WebM states none). */
  const kbps = (p: string) => {
    const out = execFileSync('ffprobe', ['-v', 'error', '-select_streams', 'a:0', '-show_entries', 'packet=size', '-of', 'csv=p=0', p], {
      encoding: 'utf8',
    });
    const bytes = out
      .split('\n')
      .map(Number)
      .filter((n) => n > 0)
      .reduce((a, b) => a + b, 0);
    return (bytes * 8) / duration(p) / 1000;
  };
  const noise = (name: string, codec: string[], extra: string[] = []) =>
    makeAudio(dir, name, { kind: 'noise', durationS: 3, volume: 0.3, extra: [...codec, ...extra] });

  it('an audio-only WebM with Opus sound stays WebM/Opus (it became Vorbis OGG), its tags kept', async () => {
    const webm = noise('note.webm', ['-c:a', 'libopus', '-b:a', '48k'], ['-metadata', 'title=Voice note']);
    const r = await runMedia(dir, 'volume-adjust', [webm], { gainDb: -2 });
    assert.match(r.name, /\.webm$/);
    assert.equal(r.contentType, 'audio/webm');
    assert.match(ffprobe(r.path).format.format_name, /webm/);
    assert.equal(audio(r.path).codec_name, 'opus');
    assert.equal(title(r.path), 'Voice note');
    assert.ok(Math.abs(duration(r.path) - 3) < 0.1, `${duration(r.path)} s`);
    // audio-metadata copies the Opus sound as it is into the same container.
    const tagged = await runMedia(dir, 'audio-metadata', [webm], { artist: 'Me' });
    assert.match(tagged.name, /\.webm$/);
    assert.equal(audio(tagged.path).codec_name, 'opus');
    assert.equal((tagged.data?.tags as Record<string, string> | undefined)?.artist, 'Me');
    assert.equal(title(tagged.path), 'Voice note');
    assert.ok(Math.abs(kbps(tagged.path) - kbps(webm)) < 1, `${kbps(tagged.path)} vs ${kbps(webm)}`);
  });

  it('Opus, AAC and MP3 are re-encoded at about their own bitrate, not a fixed 192 kbit/s', async () => {
    // A 48 kbit/s Opus voice note came out at 192 kbit/s (four times the size), a 320 kbit/s MP3 was cut to 192.
    for (const [name, codec, want] of [
      ['voice.opus', ['-c:a', 'libopus', '-b:a', '48k'], 48],
      ['low.m4a', ['-c:a', 'aac', '-b:a', '64k'], 64],
      ['high.mp3', ['-c:a', 'libmp3lame', '-b:a', '320k'], 320],
    ] as const) {
      const src = noise(name, [...codec]);
      const r = await runMedia(dir, 'fade-audio', [src], { fadeInS: 0.5, fadeOutS: 0.5 });
      assert.equal(audio(r.path).codec_name, audio(src).codec_name, name);
      const got = kbps(r.path);
      assert.ok(got > want * 0.75 && got < want * 1.25, `${name}: ${got.toFixed(1)} kbit/s, input ${kbps(src).toFixed(1)}`);
    }
    // Lossless sound has no bitrate to follow: MP3 from WAV stays at 192.
    const fromWav = await runMedia(dir, 'extract-audio', [makeVideo(dir, 'pcm.mkv', { durationS: 2, extra: ['-c:a', 'pcm_s16le'] })]);
    assert.ok(Math.abs(kbps(fromWav.path) - 192) < 15, `${kbps(fromWav.path)}`);
  });

  it('ringtone-maker downmixes 5.1 to stereo and keeps the cover art, saying so of the downmix', async () => {
    // The .m4r kept six channels, and the cover (which M4R holds) was dropped without a word.
    const src = path.join(dir, 'surround-cover.m4a');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=440:d=3', '-f', 'lavfi', '-i', 'color=red:s=32x32:d=0.1'],
      ...['-filter_complex', '[0:a]pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0[a]', '-map', '[a]', '-map', '1:v', '-frames:v', '1'],
      ...['-c:v', 'png', '-disposition:v', 'attached_pic', '-c:a', 'aac', '-metadata', 'title=Ring', src],
    ]);
    const r = await runMedia(dir, 'ringtone-maker', [src], { durationS: 2 });
    assert.equal(audio(r.path).channels, 2);
    assert.equal(cover(r.path)?.codec_name, 'png');
    assert.equal(title(r.path), 'Ring');
    assert.ok(Math.abs(duration(r.path) - 2) < 0.1, `${duration(r.path)} s`);
    assert.ok(meanVolumeDb(r.path) > -30, 'the downmix is not silent');
    assert.deepEqual(r.data?.warnings, ['6 audio channels downmixed to stereo: a ringtone is stereo at most']);
    const stereo = await runMedia(dir, 'ringtone-maker', [makeAudio(dir, 'ring-st.mp3', { durationS: 2 })], { durationS: 1 });
    assert.equal(audio(stereo.path).channels, 2);
    assert.equal(stereo.data?.warnings, undefined);
  });
});
