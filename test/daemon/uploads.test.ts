/** Mapping multipart parts to a tool's inputs and text fields to its settings. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { KilnError } from '../../src/core/errors.js';
import { defineTool, type InputSpec } from '../../src/core/tool.js';
import { assembleSettings, toToolInputs, type UploadedPart } from '../../daemon/http/uploads.js';

function tool(input: InputSpec) {
  return defineTool({
    id: 'probe',
    section: 'image',
    group: 'utilities',
    summary: 'mapping probe',
    input,
    settings: z.object({
      width: z.int().optional(),
      flag: z.boolean().optional(),
      list: z.array(z.string()).optional(),
      pos: z.object({ x: z.number() }).optional(),
      name: z.string().optional(),
    }),
    output: 'nothing',
    async run() {
      return { outputs: [] };
    },
  });
}

const part = (field: string, name: string): UploadedPart => ({ field, name, path: `/tmp/${name}`, size: 1 });

describe('multipart mapping', () => {
  it('sends a second `file` part to the extra input named file', () => {
    const t = tool({
      kind: 'file',
      accept: ['video/*'],
      extra: [{ field: 'file', accept: ['subtitle/*'], required: true, description: 'subtitles' }],
    });
    const r = toToolInputs(t, [part('file', 'v.mp4'), part('file', 's.srt')]);
    assert.deepEqual(
      r.files.map((f) => f.name),
      ['v.mp4'],
    );
    assert.deepEqual(
      r.extra.file?.map((f) => f.name),
      ['s.srt'],
    );
  });

  it('keeps indexed extras in index order and named extras by field', () => {
    const t = tool({
      kind: 'file',
      accept: ['.pdf'],
      extra: [
        { field: 'sig', indexed: true, accept: ['image/*'], required: false, description: 'signature' },
        { field: 'mask', accept: ['image/*'], required: false, description: 'mask' },
      ],
    });
    const r = toToolInputs(t, [part('sig1', 'b.png'), part('file', 'd.pdf'), part('mask', 'm.png'), part('sig0', 'a.png')]);
    assert.deepEqual(
      r.extra.sig?.map((f) => f.name),
      ['a.png', 'b.png'],
    );
    assert.deepEqual(
      r.extra.mask?.map((f) => f.name),
      ['m.png'],
    );
    assert.throws(
      () => toToolInputs(t, [part('logo', 'x.png')]),
      (e: unknown) => e instanceof KilnError && e.code === 'VALIDATION_ERROR' && /sig0, sig1…, mask/.test(e.message),
    );
  });

  it('collects repeated file parts for multi-file tools', () => {
    const t = tool({ kind: 'files', accept: ['image/*'], min: 2, max: 5 });
    assert.equal(toToolInputs(t, [part('file', 'a.png'), part('file', 'b.png'), part('file', 'c.png')]).files.length, 3);
  });

  it('merges plain fields over the settings JSON, coerced to the setting types', () => {
    const t = tool({ kind: 'file', accept: ['image/*'] });
    const s = assembleSettings(
      t,
      '{"width": 10, "name": "x"}',
      new Map([
        ['width', '20'],
        ['flag', 'true'],
        ['list', 'a, b'],
        ['pos', '{"x": 1.5}'],
        ['clientJobId', 'c1'],
        ['settings', 'ignored'],
      ]),
    );
    assert.deepEqual(s, { width: 20, name: 'x', flag: true, list: ['a', 'b'], pos: { x: 1.5 } });
    assert.throws(
      () => assembleSettings(t, '[1]', new Map()),
      (e: unknown) => e instanceof KilnError && e.code === 'VALIDATION_ERROR',
    );
  });
});
