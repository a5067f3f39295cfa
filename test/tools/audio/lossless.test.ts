import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { tempDir } from '../../helpers/fixtures.js';
import { readZip } from '../../helpers/zip.js';
import { ffprobe, makeAudio, runMedia, stream } from '../../helpers/media.js';

const dir = tempDir();
const audio = (p: string) => stream(ffprobe(p), 'audio')!;

describe('lossless audio stays lossless through a same-format tool', () => {
  it('an ALAC M4A stays ALAC (it became lossy AAC), while convert-audio --format m4a still writes AAC', async () => {
    const alac = makeAudio(dir, 'master.m4a', { durationS: 2, extra: ['-c:a', 'alac'] });
    for (const [tool, settings] of [
      ['volume-adjust', { gainDb: -3 }],
      ['fade-audio', { fadeInS: 0.2, fadeOutS: 0.2 }],
      ['trim-audio', { startS: 0.5, endS: 1.5 }],
      ['normalize-audio', {}],
    ] as const) {
      const r = await runMedia(dir, tool, [alac], settings);
      assert.equal(audio(r.path).codec_name, 'alac', tool);
    }
    const pieces = await runMedia(dir, 'split-audio', [alac], { mode: 'parts', parts: 2 });
    const piece = path.join(dir, 'alac-piece.m4a');
    writeFileSync(piece, (await readZip(pieces.path)).get('part-000.m4a')!);
    assert.equal(audio(piece).codec_name, 'alac', 'split-audio');
    const converted = await runMedia(dir, 'convert-audio', [alac], { format: 'm4a' });
    assert.equal(audio(converted.path).codec_name, 'aac');
  });
});

describe('reverse-audio in chunks keeps what the one-pass reverse keeps', () => {
  it('a long 24-bit FLAC keeps its depth, tags and cover art (chunks were 16-bit WAV joined bare)', async () => {
    const png = path.join(dir, 'cover.png');
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'color=red:s=32x32', '-frames:v', '1', png]);
    const src = path.join(dir, 'deep.flac');
    execFileSync('ffmpeg', [
      ...['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=f=440:d=3:r=44100', '-i', png, '-map', '0', '-map', '1'],
      ...['-c:a', 'flac', '-sample_fmt', 's32', '-c:v', 'png', '-disposition:v', 'attached_pic', '-metadata', 'title=Deep', src],
    ]);
    assert.equal(audio(src).bits_per_raw_sample, '24');
    process.env.KILN_REVERSE_MEMORY_MB = '0.5';
    try {
      const r = await runMedia(dir, 'reverse-audio', [src]);
      assert.equal(r.data?.chunks, 2);
      assert.equal(audio(r.path).bits_per_raw_sample, '24');
      assert.equal(ffprobe(r.path).format.tags?.title, 'Deep');
      assert.ok(ffprobe(r.path).streams.some((s) => s.disposition?.attached_pic === 1));
      // A 16-bit source stays 16-bit (a float intermediate would have made it 24).
      const flac16 = makeAudio(dir, 'shallow.flac', { durationS: 2, extra: ['-sample_fmt', 's16'] });
      assert.equal(audio(flac16).bits_per_raw_sample, '16');
      const shallow = await runMedia(dir, 'reverse-audio', [flac16]);
      assert.equal(shallow.data?.chunks, 2);
      assert.equal(audio(shallow.path).bits_per_raw_sample, '16');
    } finally {
      delete process.env.KILN_REVERSE_MEMORY_MB;
    }
  });
});
