import assert from 'node:assert/strict';
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
