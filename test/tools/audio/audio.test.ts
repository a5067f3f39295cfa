import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { describe, it, before } from 'node:test';
import sharp from 'sharp';
import type { KilnError } from '../../../src/core/errors.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import {
  duration,
  ffprobe,
  integratedLufs,
  makeAudio,
  makeSpeechWithGap,
  makeVideo,
  meanVolumeDb,
  runMedia,
  stream,
  zeroCrossingHz,
} from '../../helpers/media.js';

const dir = tempDir();
let tone: string;

before(() => {
  tone = makeAudio(dir, 'tone.wav', { freq: 440, durationS: 2 });
});

const isCode = (code: string) => (e: KilnError) => e.code === code;
const audio = (p: string) => stream(ffprobe(p), 'audio')!;

describe('convert-audio / trim-audio / volume-adjust / fade-audio', () => {
  it('converts to each format with the right codec and bitrate', async () => {
    for (const [format, codec] of [
      ['mp3', 'mp3'],
      ['ogg', 'vorbis'],
      ['flac', 'flac'],
      ['m4a', 'aac'],
      ['wav', 'pcm_s16le'],
    ] as const) {
      const r = await runMedia(dir, 'convert-audio', [tone], { format, bitrateKbps: 96 });
      assert.equal(r.name, `tone.${format}`);
      assert.equal(audio(r.path).codec_name, codec);
      assert.ok(Math.abs(duration(r.path) - 2) < 0.1, `${format} ${duration(r.path)}`);
    }
    const mp3 = await runMedia(dir, 'convert-audio', [tone], { format: 'mp3', bitrateKbps: 64 });
    const br = Number((ffprobe(mp3.path).format as { bit_rate?: string }).bit_rate);
    assert.ok(br > 55_000 && br < 75_000, `bitrate ${br}`);
    await assert.rejects(runMedia(dir, 'convert-audio', [tone], { bitrateKbps: 16 }), isCode('VALIDATION_ERROR'));
  });
  it('trims sample-accurately and keeps the input format', async () => {
    const mp3 = makeAudio(dir, 'song.mp3', { durationS: 3 });
    const r = await runMedia(dir, 'trim-audio', [mp3], { startS: 0.5, endS: 2 });
    assert.equal(r.name, 'song.mp3');
    assert.ok(Math.abs(duration(r.path) - 1.5) < 0.06, `duration ${duration(r.path)}`);
    await assert.rejects(runMedia(dir, 'trim-audio', [mp3], { startS: 2, endS: 1 }), isCode('VALIDATION_ERROR'));
  });
  it('changes the level by gainDb', async () => {
    const before = meanVolumeDb(tone);
    const r = await runMedia(dir, 'volume-adjust', [tone], { gainDb: -12 });
    assert.ok(Math.abs(meanVolumeDb(r.path) - (before - 12)) < 0.5);
  });
  it('fades in and out', async () => {
    const r = await runMedia(dir, 'fade-audio', [tone], { fadeInS: 0.5, fadeOutS: 0.5 });
    const start = meanVolumeDb(r.path, 'atrim=0:0.1');
    const mid = meanVolumeDb(r.path, 'atrim=0.8:1.2');
    const end = meanVolumeDb(r.path, 'atrim=1.9:2');
    assert.ok(start < mid - 10 && end < mid - 10, `start ${start} mid ${mid} end ${end}`);
    await assert.rejects(runMedia(dir, 'fade-audio', [tone], { fadeInS: 0, fadeOutS: 0 }), isCode('VALIDATION_ERROR'));
  });
});

describe('normalize-audio', () => {
  it('reaches -16 LUFS within 1 LU from a quiet and a loud input', async () => {
    for (const volume of [0.02, 0.9]) {
      const src = makeAudio(dir, `n${volume}.wav`, { durationS: 3, volume });
      const r = await runMedia(dir, 'normalize-audio', [src]);
      const lufs = integratedLufs(r.path);
      assert.ok(Math.abs(lufs - -16) <= 1, `input ${integratedLufs(src)} → ${lufs}`);
      assert.equal(Number(audio(r.path).sample_rate), 44100);
    }
  });
  it('refuses digital silence', async () => {
    const silent = makeAudio(dir, 'silent.wav', { volume: 0 });
    await assert.rejects(
      runMedia(dir, 'normalize-audio', [silent]),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'silent-audio',
    );
  });
  it('a 0.2 s beep is too short to measure, not "silent"', async () => {
    const beep = makeAudio(dir, 'beep.wav', { durationS: 0.2 });
    await assert.rejects(
      runMedia(dir, 'normalize-audio', [beep]),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'audio-too-short' && /too short/.test(e.message),
    );
  });
});

describe('reverse-audio / audio-speed / pitch-shift / audio-channels', () => {
  it('reverses: a rising chirp becomes falling', async () => {
    const chirp = makeAudio(dir, 'chirp.wav', { kind: 'chirp-up', durationS: 2 });
    const srcStart = zeroCrossingHz(chirp, 0.1, 0.2);
    const srcEnd = zeroCrossingHz(chirp, 1.7, 0.2);
    assert.ok(srcEnd > srcStart * 3);
    const r = await runMedia(dir, 'reverse-audio', [chirp]);
    const a = zeroCrossingHz(r.path, 0.1, 0.2);
    const b = zeroCrossingHz(r.path, 1.7, 0.2);
    assert.ok(a > b * 3, `reversed start ${a} end ${b}`);
    assert.ok(Math.abs(a - srcEnd) < srcEnd * 0.1);
  });
  it('reverses long files in chunks joined last-first', async () => {
    const chirp = makeAudio(dir, 'chirp2.wav', { kind: 'chirp-up', durationS: 2 });
    process.env.KILN_REVERSE_MEMORY_MB = '0.5';
    try {
      const r = await runMedia(dir, 'reverse-audio', [chirp]);
      assert.equal(r.data?.chunks, 2);
      assert.equal(r.name, 'chirp2.wav');
      assert.ok(Math.abs(duration(r.path) - 2) < 0.1);
      for (const t of [0.2, 0.8, 1.2, 1.7]) {
        const got = zeroCrossingHz(r.path, t, 0.1);
        const want = zeroCrossingHz(chirp, 2 - t - 0.1, 0.1);
        assert.ok(Math.abs(got - want) < want * 0.1, `at ${t}: ${got} vs ${want}`);
      }
    } finally {
      delete process.env.KILN_REVERSE_MEMORY_MB;
    }
  });
  it('speeds up without changing pitch', async () => {
    const r = await runMedia(dir, 'audio-speed', [tone], { factor: 2 });
    assert.ok(Math.abs(duration(r.path) - 1) < 0.06, `duration ${duration(r.path)}`);
    assert.ok(Math.abs(zeroCrossingHz(r.path, 0.2, 0.5) - 440) < 15);
    const slow = await runMedia(dir, 'audio-speed', [tone], { factor: 0.25 });
    assert.ok(Math.abs(duration(slow.path) - 8) < 0.2, `slow ${duration(slow.path)}`);
  });
  it('shifts the pitch of a sine by semitones, keeping the length', async () => {
    const r = await runMedia(dir, 'pitch-shift', [tone], { semitones: 12 });
    const hz = zeroCrossingHz(r.path, 0.5, 0.5);
    assert.ok(Math.abs(hz - 880) < 30, `+12: ${hz} (${String(r.data?.method)})`);
    assert.ok(Math.abs(duration(r.path) - 2) < 0.1);
    const down = await runMedia(dir, 'pitch-shift', [tone], { semitones: -5 });
    const hz2 = zeroCrossingHz(down.path, 0.5, 0.5);
    assert.ok(Math.abs(hz2 - 440 * 2 ** (-5 / 12)) < 15, `-5: ${hz2}`);
    await assert.rejects(runMedia(dir, 'pitch-shift', [tone], { semitones: 0 }), isCode('VALIDATION_ERROR'));
  });
  it('swaps channels: a left-only tone ends up on the right', async () => {
    const left = makeAudio(dir, 'left.wav', { kind: 'left-only' });
    assert.ok(meanVolumeDb(left, 'pan=mono|c0=c1') < -80);
    const r = await runMedia(dir, 'audio-channels', [left], { mode: 'swap' });
    assert.ok(meanVolumeDb(r.path, 'pan=mono|c0=c0') < -80, 'left now silent');
    assert.ok(meanVolumeDb(r.path, 'pan=mono|c0=c1') > -15, 'right has the tone');
  });
  it('on 5.1: swap exchanges front left and right and keeps the other four, mono mixes every channel', async () => {
    // Only the centre and the rear right sound: the stereo filters alone dropped both.
    const surround = path.join(dir, 'surround.wav');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=440:d=0.5'],
      ...['-af', 'pan=5.1|c0=0*c0|c1=0*c0|c2=c0|c3=0*c0|c4=0*c0|c5=c0', surround],
    ]);
    assert.equal(audio(surround).channels, 6);
    const swapped = await runMedia(dir, 'audio-channels', [surround], { mode: 'swap' });
    assert.equal(audio(swapped.path).channels, 6);
    assert.ok(meanVolumeDb(swapped.path, 'pan=mono|c0=c2') > -40, 'the centre kept');
    assert.ok(meanVolumeDb(swapped.path, 'pan=mono|c0=c5') > -40, 'the rear right kept');
    assert.ok(meanVolumeDb(swapped.path, 'pan=mono|c0=c0') < -80, 'front left still silent');
    const mono = await runMedia(dir, 'audio-channels', [surround], { mode: 'stereo-to-mono' });
    assert.equal(audio(mono.path).channels, 1);
    assert.ok(meanVolumeDb(mono.path) > -45, `the centre and rear are in the mix (${meanVolumeDb(mono.path)} dB)`);
  });
  it('mixes stereo to mono and spreads mono to stereo', async () => {
    const mono = await runMedia(dir, 'audio-channels', [tone], { mode: 'stereo-to-mono' });
    assert.equal(audio(mono.path).channels, 1);
    const stereo = await runMedia(dir, 'audio-channels', [mono.path], { mode: 'mono-to-stereo' });
    assert.equal(audio(stereo.path).channels, 2);
    assert.ok(
      Math.abs(meanVolumeDb(stereo.path, 'pan=mono|c0=c0') - meanVolumeDb(stereo.path, 'pan=mono|c0=c1')) < 0.1,
      'both sides equal',
    );
    await assert.rejects(runMedia(dir, 'audio-channels', [mono.path], { mode: 'swap' }), isCode('UNSUPPORTED_INPUT'));
    await assert.rejects(runMedia(dir, 'audio-channels', [tone], {}), isCode('VALIDATION_ERROR'));
  });
});

describe('silence-removal / noise-reduction', () => {
  it('removes the silence between two spoken phrases', async () => {
    const speech = makeSpeechWithGap(dir, 'speech.wav', 2);
    const before = duration(speech);
    const r = await runMedia(dir, 'silence-removal', [speech], { thresholdDb: -50, minSilenceS: 0.5 });
    const after = duration(r.path);
    assert.ok(before - after > 1.5, `before ${before}, after ${after}`);
    assert.ok(after > 1, 'speech kept');
  });
  it('lowers the noise, more with strong, and keeps the tone', async () => {
    const noisy = makeAudio(dir, 'noisy.wav', { kind: 'noisy-sine', freq: 440, durationS: 2, volume: 0.08 });
    const hiss = (p: string) => meanVolumeDb(p, 'highpass=f=2000');
    const toneDb = (p: string) => meanVolumeDb(p, 'bandpass=f=440:w=50');
    const light = (await runMedia(dir, 'noise-reduction', [noisy], { strength: 'light' })).path;
    const strong = (await runMedia(dir, 'noise-reduction', [noisy], { strength: 'strong' })).path;
    assert.ok(hiss(light) < hiss(noisy) - 2, `light ${hiss(light)} vs ${hiss(noisy)}`);
    assert.ok(hiss(strong) < hiss(light) - 3, `strong ${hiss(strong)} vs light ${hiss(light)}`);
    assert.ok(Math.abs(toneDb(strong) - toneDb(noisy)) < 1.5, `tone ${toneDb(strong)} vs ${toneDb(noisy)}`);
  });
});

describe('merge-audio / split-audio / ringtone-maker', () => {
  it("joins files in order at the first file's rate", async () => {
    const a = makeAudio(dir, 'm1.wav', { freq: 300, durationS: 1, rate: 48000 });
    const b = makeAudio(dir, 'm2.mp3', { freq: 1200, durationS: 1.5, channels: 1 });
    const r = await runMedia(dir, 'merge-audio', [a, b], { format: 'flac' });
    const s = audio(r.path);
    assert.deepEqual([s.codec_name, Number(s.sample_rate), s.channels], ['flac', 48000, 2]);
    assert.ok(Math.abs(duration(r.path) - 2.5) < 0.1, `duration ${duration(r.path)}`);
    assert.ok(Math.abs(zeroCrossingHz(r.path, 0.3, 0.4) - 300) < 15);
    assert.ok(Math.abs(zeroCrossingHz(r.path, 1.6, 0.4) - 1200) < 30);
  });
  it('splits by time, by parts and at silences', async () => {
    const src = makeAudio(dir, 'five.mp3', { durationS: 5 });
    const t = await runMedia(dir, 'split-audio', [src], { mode: 'time', segmentS: 2 });
    assert.equal(t.name, 'five.zip');
    assert.equal(t.data?.pieces, 3);
    const p = await runMedia(dir, 'split-audio', [src], { mode: 'parts', parts: 4 });
    assert.equal(p.data?.pieces, 4);
    const speech = makeSpeechWithGap(dir, 'speech2.wav', 1.5);
    const s = await runMedia(dir, 'split-audio', [speech], { mode: 'silence', thresholdDb: -50, minSilenceS: 1 });
    assert.equal(s.data?.pieces, 2);
    const cut = (s.data!.cutsS as number[])[0]!;
    const half = duration(speech) / 2;
    assert.ok(Math.abs(cut - half) < 0.6, `cut ${cut} near ${half}`);
  });
  it('makes an M4R (AAC) ringtone of the asked length', async () => {
    const src = makeAudio(dir, 'long.mp3', { durationS: 4 });
    const r = await runMedia(dir, 'ringtone-maker', [src], { startS: 1, durationS: 2 });
    assert.match(r.name, /\.m4r$/);
    const p = ffprobe(r.path);
    assert.equal(stream(p, 'audio')!.codec_name, 'aac');
    assert.match(p.format.format_name, /mp4|m4a/);
    assert.ok(Math.abs(Number(p.format.duration) - 2) < 0.1);
    await assert.rejects(runMedia(dir, 'ringtone-maker', [src], { durationS: 31 }), isCode('VALIDATION_ERROR'));
  });
});

describe('waveform-image / audio-metadata', () => {
  it('draws the waveform in the colour asked on a transparent PNG', async () => {
    const r = await runMedia(dir, 'waveform-image', [tone], { width: 300, height: 80, color: '#ff0000' });
    const { data, info } = await sharp(r.path).raw().toBuffer({ resolveWithObject: true });
    assert.deepEqual([info.width, info.height, info.channels], [300, 80, 4]);
    let red = 0;
    let transparent = 0;
    for (let i = 0; i < data.length; i += 4) {
      if (data[i + 3]! === 0) transparent++;
      else if (data[i]! > 200 && data[i + 1]! < 50 && data[i + 2]! < 50) red++;
    }
    assert.ok(red > 300 && transparent > 300, `red ${red}, transparent ${transparent}`);
  });
  it('writes title/artist/album and reads them back; strip removes tags', async () => {
    const mp3 = makeAudio(dir, 'tagged.mp3', {
      extra: ['-metadata', 'title=Old', '-metadata', 'comment=private', '-metadata', 'genre=Noise'],
    });
    const r = await runMedia(dir, 'audio-metadata', [mp3], { title: 'Neu: Ü', artist: 'Kiln', album: 'Tests' });
    const tags = ffprobe(r.path).format.tags ?? {};
    assert.deepEqual([tags.title, tags.artist, tags.album, tags.genre], ['Neu: Ü', 'Kiln', 'Tests', 'Noise']);
    assert.deepEqual((r.data!.tags as Record<string, string>).title, 'Neu: Ü');
    assert.equal(audio(r.path).codec_name, 'mp3');
    const s = await runMedia(dir, 'audio-metadata', [mp3], { strip: true, title: 'Only' });
    const st = ffprobe(s.path).format.tags ?? {};
    assert.equal(st.title, 'Only');
    assert.equal(st.genre, undefined);
    assert.equal(st.comment, undefined);
    assert.deepEqual(Object.keys(s.data?.tags as object).sort(), ['title']);
    const ogg = makeAudio(dir, 'tagged.ogg', { extra: ['-c:a', 'libvorbis', '-metadata', 'artist=Old'] });
    const o = await runMedia(dir, 'audio-metadata', [ogg], { strip: true });
    assert.equal((o.data!.tags as Record<string, string>).artist, undefined);
    await assert.rejects(runMedia(dir, 'audio-metadata', [mp3], {}), isCode('VALIDATION_ERROR'));
  });
});

describe('inputs audio tools refuse', () => {
  it('a video without audio, an image, and text are UNSUPPORTED_INPUT', async () => {
    const v = makeVideo(dir, 'silent.mp4', { audio: false, durationS: 1 });
    await assert.rejects(runMedia(dir, 'convert-audio', [v]), isCode('UNSUPPORTED_INPUT'));
    const png = await makeImage(dir, 'x.png', 20, 20);
    await assert.rejects(runMedia(dir, 'reverse-audio', [png]), isCode('UNSUPPORTED_INPUT'));
    const withAudio = makeVideo(dir, 'withaudio.mp4', { durationS: 1 });
    const r = await runMedia(dir, 'reverse-audio', [withAudio]);
    assert.equal(r.name, 'withaudio.m4a');
    assert.equal(stream(ffprobe(r.path), 'video'), undefined);
  });
});
