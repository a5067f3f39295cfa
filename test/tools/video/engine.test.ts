import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync, readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { describe, it, before } from 'node:test';
import type { KilnError } from '../../../src/core/errors.js';
import { ffmpegCapabilities } from '../../../src/engines/ffmpeg/capabilities.js';
import { displaySize, probe } from '../../../src/engines/ffmpeg/probe.js';
import { runFfmpeg } from '../../../src/engines/ffmpeg/run.js';
import { atempoChain } from '../../../src/tools/audio/_shared/tempo.js';
import { padSize } from '../../../src/tools/video/_shared/pad.js';
import { probeVideo } from '../../../src/tools/video/_shared/video-input.js';
import { makeImage, tempDir } from '../../helpers/fixtures.js';
import { ffprobe, halfClip, makeAudio, makeVideo, runMedia, stream } from '../../helpers/media.js';

const dir = tempDir();
let clip: string;

before(() => {
  clip = makeVideo(dir, 'clip.mp4', { durationS: 2, fps: 25 });
});

const isCode = (code: string) => (e: KilnError) => e.code === code;

/** Command lines of running ffmpeg processes that mention `needle` (read-only look at the process table). */
function ffmpegRunning(needle: string): string[] {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l.startsWith('ffmpeg') && l.includes(needle));
}

describe('probe', () => {
  it('reads streams, duration, codecs, fps and rotation', async () => {
    const info = await probe(clip);
    assert.ok(Math.abs(info.duration - 2) < 0.1);
    assert.equal(info.video?.codec, 'h264');
    assert.equal(info.video?.fps, 25);
    assert.deepEqual([info.video?.width, info.video?.height], [160, 120]);
    assert.equal(info.audio?.codec, 'aac');
    assert.equal(info.audio?.sampleRate, 48000);
    const rotated = path.join(dir, 'rotated.mp4');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', clip, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', rotated]);
    const r = await probe(rotated);
    assert.ok(r.video!.rotation === 90 || r.video!.rotation === 270, `rotation ${r.video!.rotation}`);
    assert.deepEqual(displaySize(r.video!), { width: 120, height: 160 });
    // Tools work in displayed pixels: a rotated phone clip resized to width 60 comes out 60x80.
    const out = await runMedia(dir, 'resize-video', [rotated], { width: 60 });
    const v = stream(ffprobe(out.path), 'video')!;
    assert.deepEqual([v.width, v.height], [60, 80]);
  });
  it('calls unreadable files UNSUPPORTED_INPUT', async () => {
    const bad = path.join(dir, 'bad.mp4');
    writeFileSync(bad, Buffer.concat([readFileSync(clip).subarray(0, 64), Buffer.alloc(200)]));
    await assert.rejects(probe(bad), isCode('UNSUPPORTED_INPUT'));
  });
});

describe('input checks', () => {
  it('a PNG given to a video tool is UNSUPPORTED_INPUT', async () => {
    const png = await makeImage(dir, 'still.png', 64, 64);
    await assert.rejects(runMedia(dir, 'mute-video', [png]), isCode('UNSUPPORTED_INPUT'));
    // Past the byte sniffing too: ffprobe sees a video stream in a PNG, the engine still says no.
    await assert.rejects(
      probeVideo({ path: png, name: 'still.png', size: 1 }),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && /still image/.test(e.message),
    );
  });
  it('an audio-only file given to a video tool is UNSUPPORTED_INPUT', async () => {
    const m4a = makeAudio(dir, 'only.m4a');
    for (const id of ['convert-video', 'trim-video', 'video-to-gif']) {
      await assert.rejects(
        runMedia(dir, id, [m4a], id === 'trim-video' ? { endS: 1 } : {}),
        (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && /no video stream/.test(e.message),
      );
    }
  });
  it('a GIF whose header declares 65535 × 65535 is UNSUPPORTED_INPUT before ffmpeg runs', async () => {
    const gif = path.join(dir, 'huge.gif');
    const head = [...Buffer.from('GIF89a'), 0xff, 0xff, 0xff, 0xff, 0x80, 0, 0, 0, 0, 0, 255, 255, 255];
    writeFileSync(gif, Buffer.from([...head, 0x2c, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 0x02, 0x02, 0x44, 0x01, 0x00, 0x3b]));
    for (const id of ['mute-video', 'gif-to-video']) {
      await assert.rejects(
        runMedia(dir, id, [gif]),
        (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && /no usable frame size/.test(e.message),
      );
    }
  });
  it('a truncated video is UNSUPPORTED_INPUT, not a crash', async () => {
    const cut = path.join(dir, 'cut.mp4');
    writeFileSync(cut, readFileSync(clip).subarray(0, 3000));
    await assert.rejects(runMedia(dir, 'convert-video', [cut]), isCode('UNSUPPORTED_INPUT'));
  });
  // Found by the hostile corpus: half of an MKV probes fine, then its video stream ends before a frame
  // decodes; ffmpeg fails with "Cannot determine format of input stream 0:0 after EOF" (was a 500).
  it('an MKV cut before its first whole frame is UNSUPPORTED_INPUT', async () => {
    const cut = path.join(dir, 'cut.mkv');
    writeFileSync(cut, halfClip(dir, 'whole.mkv'));
    await assert.rejects(runMedia(dir, 'convert-video', [cut]), isCode('UNSUPPORTED_INPUT'));
  });
});

describe('runFfmpeg', () => {
  it('reports increasing percents against the duration and renames into place', async () => {
    const outDir = path.join(dir, 'run1');
    mkdirSync(outDir);
    const seen: number[] = [];
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=s=320x240:r=25:d=4', '-c:v', 'libx264', '-preset', 'medium'], {
      durationS: 4,
      onProgress: (p) => seen.push(p),
      output: path.join(outDir, 'x.mp4'),
    });
    assert.ok(seen.length >= 2, `progress ${seen.join(',')}`);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! > seen[i - 1]!);
    assert.equal(seen.at(-1), 100);
    assert.deepEqual(readdirSync(outDir), ['x.mp4']);
  });
  it('an empty output (ffmpeg exits 0 after "Error writing trailer") is UNSUPPORTED_INPUT, nothing left behind', async () => {
    const outDir = path.join(dir, 'run-empty');
    mkdirSync(outDir);
    // One frame at 25 fps through fps=12: no frame reaches the GIF muxer, and ffmpeg 5/6 still exits 0.
    await assert.rejects(
      runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=s=32x32:r=25:d=0.04', '-vf', 'fps=12'], { output: path.join(outDir, 'x.gif') }),
      (e: KilnError) => e.code === 'UNSUPPORTED_INPUT' && e.reason === 'empty-output',
    );
    assert.deepEqual(readdirSync(outDir), []);
  });
  it('on abort kills ffmpeg and leaves no output or temp file', async () => {
    const outDir = path.join(dir, 'run2');
    mkdirSync(outDir);
    const ac = new AbortController();
    const target = path.join(outDir, 'never.mp4');
    let aborted = false;
    const t0 = Date.now();
    await assert.rejects(
      runFfmpeg(['-f', 'lavfi', '-i', 'testsrc2=s=640x480:r=25:d=120', '-c:v', 'libx264', '-preset', 'slow'], {
        signal: ac.signal,
        durationS: 120,
        output: target,
        onProgress: (p) => {
          if (p > 0 && !aborted) {
            aborted = true;
            ac.abort();
          }
        },
      }),
      isCode('CANCELLED'),
    );
    assert.ok(aborted, 'progress arrived before the abort');
    assert.ok(Date.now() - t0 < 30_000);
    assert.deepEqual(readdirSync(outDir), [], 'no partial output');
    assert.deepEqual(ffmpegRunning(outDir), [], 'ffmpeg is gone');
  });
  it('cancelling a tool run (AbortController) stops it with CANCELLED', async () => {
    const src = makeVideo(dir, 'six.mp4', { durationS: 6, width: 320, height: 240 });
    const ac = new AbortController();
    let wsDir = '';
    const started = Date.now();
    const p = runMedia(
      dir,
      'convert-video',
      [src],
      { format: 'webm', quality: 'high' },
      { signal: ac.signal, workDir: (d) => (wsDir = d) },
    );
    setTimeout(() => ac.abort(), 700);
    await assert.rejects(p, isCode('CANCELLED'));
    assert.ok(Date.now() - started < 20_000);
    assert.equal(existsSync(wsDir), false, 'workspace removed');
    assert.deepEqual(ffmpegRunning(wsDir), []);
  });
});

describe('capabilities and helpers', () => {
  it('detects the filters of this build', async () => {
    const caps = await ffmpegCapabilities();
    assert.ok(caps.filters.has('loudnorm'));
    assert.ok(caps.encoders.has('libx264'));
    assert.equal(typeof caps.vidstab, 'boolean');
    assert.equal(caps.vidstab, caps.filters.has('vidstabdetect'));
  });
  it('chains atempo within 0.5-2 to reach 0.25-4', () => {
    for (const f of [0.25, 0.3, 0.5, 1.5, 2, 3.7, 4]) {
      const parts = atempoChain(f)
        .split(',')
        .map((x) => Number(x.split('=')[1]));
      assert.ok(
        parts.every((x) => x >= 0.5 && x <= 2),
        atempoChain(f),
      );
      assert.ok(Math.abs(parts.reduce((a, b) => a * b, 1) - f) < 1e-5);
    }
  });
  it('pads to the smallest frame of the target ratio', () => {
    assert.deepEqual(padSize({ width: 160, height: 120 }, '16:9'), { width: 214, height: 120 });
    assert.deepEqual(padSize({ width: 160, height: 120 }, '1:1'), { width: 160, height: 160 });
    assert.deepEqual(padSize({ width: 100, height: 300 }, '3:4'), { width: 226, height: 300 });
  });
});

describe('keptStreams', () => {
  it('keeps picture subtitles in MKV, leaves them out of MP4 and WebM with a reason, converts text ones', async () => {
    const { keptStreams } = await import('../../../src/engines/ffmpeg/streams.js');
    const sub = (index: number, codec: string) => ({ index, type: 'subtitle' as const, codec, rotation: 0, attachedPic: false, tags: {} });
    const info = {
      duration: 1,
      formatName: 'matroska,webm',
      streams: [{ index: 1, type: 'audio' as const, codec: 'aac', rotation: 0, attachedPic: false, tags: {} }],
      subtitles: [sub(2, 'hdmv_pgs_subtitle'), sub(3, 'mov_text')],
      tags: {},
      chapters: [],
    };
    assert.deepEqual(keptStreams(info, 'mkv').args, ['-map', '0:1', '-map', '0:2', '-c:s:0', 'copy', '-map', '0:3', '-c:s:1', 'srt']);
    const mp4 = keptStreams(info, 'mp4');
    assert.deepEqual(mp4.args, ['-map', '0:1', '-map', '0:3', '-c:s:0', 'mov_text']);
    assert.deepEqual(mp4.dropped, ['subtitle stream 2 (hdmv_pgs_subtitle) left out: MP4 holds only text subtitles']);
    assert.equal(keptStreams(info, 'webm').dropped.length, 1);
  });
});
