/**
 * Text inputs above KILN_MAX_TEXT_BYTES are refused from their size (LIMIT_EXCEEDED, exit 2) before any
 * of them is read: read whole, a 600 MB text passed V8's longest string ("Cannot create a string longer
 * than 0x1fffffe8 characters") and failed as INTERNAL. The limit is lowered here so the files stay small.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { kiln } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { makeSrt, makeVideo } from '../helpers/media.js';

const dir = tempDir();
const LIMIT = 4096;

/** Runs kiln with the lowered text limit and its workspaces in a fresh directory, to see none is left. */
async function limited(args: string[]) {
  const tmp = path.join(dir, `tmp-${Math.random().toString(36).slice(2)}`);
  mkdirSync(tmp);
  const r = await kiln(args, { env: { KILN_MAX_TEXT_BYTES: String(LIMIT), KILN_TMP_DIR: tmp } });
  return { ...r, leftovers: readdirSync(tmp) };
}

/** `n` bytes of paragraphs of prose. */
function prose(n: number): string {
  const para = 'The quick brown fox jumps over the lazy dog near the riverbank.\n\n';
  return para.repeat(Math.ceil(n / para.length)).slice(0, n);
}

describe('text input size limit (KILN_MAX_TEXT_BYTES)', () => {
  it('to-epub and markdown-to-html refuse a text over the limit as LIMIT_EXCEEDED naming both sizes; at the limit it is read', async () => {
    const txt = path.join(dir, 'novel.txt');
    writeFileSync(txt, prose(LIMIT + 1));
    const out = path.join(dir, 'novel.epub');
    const r = await limited(['to-epub', txt, '-o', out]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(
      r.stderr,
      /novel\.txt: The text input is 4\.0 KB, above the limit of 4\.0 KB for text inputs \(KILN_MAX_TEXT_BYTES=4096\)/,
    );
    assert.equal(existsSync(out), false);
    assert.deepEqual(r.leftovers, []);

    // Markdown that pandoc reads straight from the file (UTF-8, never decoded by kiln) is held to it too.
    const md = path.join(dir, 'notes.md');
    writeFileSync(md, `# Notes\n\n${prose(LIMIT * 3)}`);
    const m = await limited(['markdown-to-html', md, '-o', path.join(dir, 'notes.html')]);
    assert.equal(m.code, 2, m.stderr);
    assert.match(m.stderr, /notes\.md: The text input is 12\.0 KB, above the limit of 4\.0 KB/);

    writeFileSync(txt, `${prose(LIMIT - 20)}Last paragraph.\n`.padEnd(LIMIT, ' '));
    const ok = await limited(['to-epub', txt, '-o', out]);
    assert.equal(ok.code, 0, ok.stderr);
    const text = execFileSync('unzip', ['-p', out, '*.xhtml']).toString();
    assert.match(text, /Last paragraph\./);
  });

  it('embed-subtitles refuses a subtitle file over the limit', async () => {
    const clip = makeVideo(dir, 'clip.mp4', { durationS: 1, audio: false });
    const srt = makeSrt(
      dir,
      'long.srt',
      Array.from({ length: 200 }, (_, i) => ({ start: i * 0.004, end: i * 0.004 + 0.003, text: `Line ${i}` })),
    );
    const out = path.join(dir, 'soft.mp4');
    const r = await limited(['embed-subtitles', clip, srt, '-o', out]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /long\.srt is [\d.]+ KB, above the limit of 4\.0 KB for text inputs/);
    assert.equal(existsSync(out), false);
  });
});
