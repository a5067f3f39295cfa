import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { decodeText, detectBytesEncoding, detectTextEncoding } from '../../src/core/text-encoding.js';
import { htmlContentType } from '../../src/engines/chromium/html-charset.js';
import { CJK_CSV } from '../helpers/cjk-text.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir();

/** Windows-1252 bytes of `s` (Latin-1 letters as they are, plus the 0x80–0x9F punctuation used here). */
const cp1252 = (s: string) =>
  Buffer.from([...s].map((c) => ({ '€': 0x80, '“': 0x93, '”': 0x94, '–': 0x96, Œ: 0x8c, œ: 0x9c })[c] ?? c.charCodeAt(0)));

describe('text encoding detection', () => {
  it('reads a CSV in Shift_JIS, GBK, CP949 or Big5 in its code page (files and bytes)', async () => {
    for (const [enc, { text, bytes }] of Object.entries(CJK_CSV)) {
      const file = path.join(dir, `${enc}.csv`);
      writeFileSync(file, bytes);
      assert.equal(await detectTextEncoding(file), enc, enc);
      assert.equal(detectBytesEncoding(bytes), enc, enc);
      assert.equal(decodeText(bytes, await detectTextEncoding(file)), text, enc);
    }
  });

  it('keeps Latin text in Windows-1252, even where its bytes are valid in an East Asian code page', () => {
    for (const s of [
      'Grüße aus München, schöne Straße',
      'élève déjà où Ça Évian ÉCOLE',
      'ação não coração façade',
      'Ñandú señor año “quoted” €5 – œuvre Œuvre',
      'ÄÖÜ äöü ß ÀÉÈ Øre Åsa smørrebrød',
      'name;price\ncafé;€5\nnaïve;“q”\n',
    ])
      assert.equal(detectBytesEncoding(cp1252(s)), 'windows-1252', s);
  });

  it('UTF-8 and UTF-16 with a BOM are unchanged', () => {
    assert.equal(detectBytesEncoding(Buffer.from('東京 café')), 'utf-8');
    assert.equal(detectBytesEncoding(Buffer.from('\uFEFF東京', 'utf16le')), 'utf-16le');
  });
});

describe('the Content-Type html-to-pdf serves a page with', () => {
  it('leaves the charset to a page that declares one, else names the one of its bytes', () => {
    const type = (s: string | Buffer) => htmlContentType(typeof s === 'string' ? Buffer.from(s, 'latin1') : s);
    assert.equal(type('<meta charset="windows-1252"><p>caf\xe9</p>'), 'text/html');
    assert.equal(type('<META CONTENT="text/html; charset=Shift_JIS" HTTP-EQUIV="Content-Type">'), 'text/html');
    // "charset=" in a description's text declares nothing: the bytes decide.
    assert.equal(type('<meta name="description" content="set charset=utf-8 here"><p>caf\xe9</p>'), 'text/html; charset=windows-1252');
    assert.equal(type(Buffer.from('<p>café 東京</p>')), 'text/html; charset=utf-8');
    assert.equal(type(CJK_CSV.shift_jis.bytes), 'text/html; charset=shift_jis');
  });
});
