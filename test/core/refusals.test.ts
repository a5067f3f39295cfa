/**
 * What requireKind says when a file is not what a tool takes: the kind found in its bytes with its
 * article as it is read aloud, and a password-protected Office document named as such rather than as
 * the Compound File its encryption wraps it in.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KilnError } from '../../src/core/errors.js';
import { requireKind } from '../../src/core/sniff.js';
import { compoundFile } from '../helpers/compound-file.js';

async function refusal(bytes: Buffer, name: string, accept: string[]): Promise<KilnError> {
  try {
    await requireKind(bytes, name, accept as never, { taker: 'to-epub' });
  } catch (e) {
    assert.ok(e instanceof KilnError);
    return e;
  }
  throw new Error(`${name} was accepted`);
}

describe('input refusals', () => {
  it('names a password-protected DOCX, XLSX or PPTX as such, for any tool (reason document-encrypted)', async () => {
    const sealed = compoundFile(['EncryptionInfo', 'EncryptedPackage']);
    for (const name of ['report.docx', 'Budget.XLSX', 'deck.pptx']) {
      const e = await refusal(sealed, name, ['.md', '.docx', '.html']);
      assert.equal(e.code, 'UNSUPPORTED_INPUT');
      assert.equal(e.reason, 'document-encrypted');
      assert.match(e.message, new RegExp(`^${name.replace('.', '\\.')} is password-protected \\(encrypted\\)`));
    }
    // Under another name it is what its bytes are.
    assert.match((await refusal(sealed, 'old.doc', ['.md'])).message, /is a cfb file/);
  });

  it('says "an" before an extension read with a vowel sound', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    assert.match((await refusal(png, 'x.png', ['.md'])).message, /x\.png is a png file/);
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>');
    assert.match((await refusal(svg, 'x.svg', ['.md'])).message, /x\.svg is an svg file/);
  });
});
