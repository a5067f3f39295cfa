/**
 * Issue #16 item 8: ffmpeg opens each input with the demuxer of the type runTool sniffed from its
 * bytes (`-f <demuxer>` before its `-i`), instead of probing — a file that passed as WAV is read as WAV,
 * never as whatever format (playlist, concat list) its bytes or name would probe highest as.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { forgetKind, rememberKind, sniffedKind } from '../../src/core/sniffed-kinds.js';
import { testTool } from '../helpers/test-tool.js';
import { localInputs } from '../../src/engines/ffmpeg/run.js';
import { findTool } from '../../src/tools/index.js';
import { inputFile, runTool } from '../../src/tools/run-tool.js';
import { tempDir } from '../helpers/fixtures.js';
import { ffprobe, makeAudio } from '../helpers/media.js';

describe('ffmpeg demuxer from the sniffed type', () => {
  const dir = tempDir('kiln-demux-');

  it('a run passes -f <demuxer> for inputs sniffed as media, and forgets them afterwards', async () => {
    const wav = makeAudio(dir, 'clip.m3u8.wav');
    let seen: string[] = [];
    const probe = testTool('demux-probe', 'audio/*', async (_ctx, { files }) => {
      seen = localInputs(['-ss', '0', '-i', files[0]!.path, '-f', 'lavfi', '-i', 'anullsrc', '-map', '0']);
      return { outputs: [], data: {} };
    });
    await runTool(probe as never, { files: [await inputFile(wav)], extra: {} }, {}, { workDir: path.join(dir, 'w'), dataDir: dir });
    assert.deepEqual(seen, [
      '-ss',
      '0',
      '-protocol_whitelist',
      'file,pipe',
      '-f',
      'wav',
      '-i',
      wav,
      '-f',
      'lavfi',
      '-protocol_whitelist',
      'file,pipe',
      '-i',
      'anullsrc',
      '-map',
      '0',
    ]);
    assert.equal(sniffedKind(wav), undefined, 'forgotten after the run');
  });

  it('maps containers, leaves images, unknown paths and explicit -f alone', () => {
    const p = path.join(dir, 'x.bin');
    for (const [ext, demuxer] of [
      ['mp4', 'mov'],
      ['webm', 'matroska'],
      ['mp3', 'mp3'],
      ['ogg', 'ogg'],
      ['gif', 'gif'],
      ['png', undefined],
    ] as const) {
      rememberKind(p, { ext, mime: 'x/x' });
      try {
        const args = localInputs(['-i', p]);
        assert.deepEqual(args.slice(2, -2), demuxer ? ['-f', demuxer] : [], ext);
        assert.deepEqual(localInputs(['-f', 'concat', '-i', p]).filter((a) => a === '-f').length, 1, `${ext}: an explicit -f wins`);
      } finally {
        forgetKind(p);
      }
    }
    assert.deepEqual(localInputs(['-i', p]), ['-protocol_whitelist', 'file,pipe', '-i', p]);
  });

  it('real tools still run with the forced demuxer', { skip: !findTool('audio-channels') && 'no audio-channels' }, async () => {
    const wav = makeAudio(dir, 'stereo.wav');
    const r = await runTool(
      findTool('audio-channels')!,
      { files: [await inputFile(wav)], extra: {} },
      { mode: 'stereo-to-mono' },
      {
        workDir: path.join(dir, 'w2'),
        dataDir: dir,
      },
    );
    assert.equal(ffprobe(r.output!.path).streams?.find((s: { codec_type?: string }) => s.codec_type === 'audio')?.channels, 1);
  });
});
