import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it, before } from 'node:test';
import { kiln } from '../../helpers/cli.js';
import { tempDir } from '../../helpers/fixtures.js';
import { duration, ffprobe, makeAudio, makeVideo, stream, zeroCrossingHz } from '../../helpers/media.js';

const dir = tempDir();
before(() => {
  makeVideo(dir, 'clip.mp4', { durationS: 2 });
});

describe('video and audio tools from the CLI', () => {
  it('kiln trim-video clip.mp4 --start-s 0.5 --end-s 1.5 -o t.mp4', async () => {
    const r = await kiln(['trim-video', 'clip.mp4', '--start-s', '0.5', '--end-s', '1.5', '--precise', '-o', 't.mp4'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const d = duration(path.join(dir, 't.mp4'));
    assert.ok(Math.abs(d - 1) < 0.1, `duration ${d}`);
  });
  it('kiln replace-audio v.mp4 --audio a.wav', async () => {
    makeAudio(dir, 'a.wav', { freq: 1000, durationS: 2 });
    const r = await kiln(['replace-audio', 'clip.mp4', '--audio', 'a.wav', '-o', 'dub.mp4'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    const out = path.join(dir, 'dub.mp4');
    assert.equal(stream(ffprobe(out), 'video')!.codec_name, 'h264');
    assert.ok(Math.abs(zeroCrossingHz(out, 0.5, 0.5) - 1000) < 30);
  });
  it('an audio-only file to a video tool exits 3 with UNSUPPORTED_INPUT', async () => {
    makeAudio(dir, 'song.m4a');
    const r = await kiln(['mute-video', 'song.m4a', '-o', 'x.mp4', '--json'], { cwd: dir });
    assert.equal(r.code, 3);
    assert.match(r.stdout + r.stderr, /UNSUPPORTED_INPUT/);
    assert.equal(existsSync(path.join(dir, 'x.mp4')), false);
  });
  it('split-audio writes a ZIP of the parts', async () => {
    makeAudio(dir, 'three.wav', { durationS: 3 });
    const r = await kiln(['split-audio', 'three.wav', '--mode', 'parts', '--parts', '3', '-o', 'parts.zip'], { cwd: dir });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(existsSync(path.join(dir, 'parts.zip')));
  });
  it('kiln doctor says when the ffmpeg build lacks vidstab, and stabilize-video refuses', async () => {
    // A stand-in ffmpeg whose filter list lacks vidstab; everything else goes to the real one.
    const fake = path.join(dir, 'fakebin');
    mkdirSync(fake);
    const script = path.join(fake, 'ffmpeg');
    writeFileSync(
      script,
      '#!/bin/sh\ncase "$*" in\n  *-filters*) printf " ... null              V->V       Pass.\\n ... loudnorm          A->A       EBU R128\\n"; exit 0;;\nesac\nexec /usr/bin/ffmpeg "$@"\n',
    );
    chmodSync(script, 0o755);
    const env = { PATH: `${fake}:${process.env.PATH}` };
    const d = await kiln(['doctor'], { cwd: dir, env });
    assert.match(d.stdout, /lacks vidstab/);
    const j = await kiln(['doctor', '--json'], { cwd: dir, env });
    assert.ok((JSON.parse(j.stdout) as { ffmpegNotes: string[] }).ffmpegNotes.some((n) => /vidstab/.test(n)));
    const s = await kiln(['stabilize-video', 'clip.mp4', '-o', 'st.mp4'], { cwd: dir, env });
    assert.equal(s.code, 4, s.stderr);
    assert.match(s.stderr + s.stdout, /vidstab/);
    const real = await kiln(['doctor'], { cwd: dir });
    assert.doesNotMatch(real.stdout, /lacks vidstab/);
  });
});
