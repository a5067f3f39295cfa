/**
 * The AI tools of issue #14 against the spec's catalog, and their batch routes and CLI flags without
 * any model: every catalog setting exists with the catalog's range, enum and default (as the CLI help,
 * OpenAPI and llms.txt show them, all from describeSettings), the deliberate differences listed with
 * their reason; the batch route runs the classical paths and says per input which method ran; the
 * erase-object `--mask` flag works on the CLI.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import sharp from 'sharp';
import { describeSettings } from '../../src/core/settings.js';
import { findTool } from '../../src/tools/index.js';
import { kiln, REPO } from '../helpers/cli.js';
import { api, filePart, form, startServer, type TestServer } from '../helpers/server.js';
import { readZip } from '../helpers/zip.js';
import { dir, emptyData, png, rgbOf, scene, texture } from './inpaint-fixtures.js';

const AI_TOOLS = [
  'upscale',
  'enhance-faces',
  'noise-removal',
  'image-enhancement',
  'erase-object',
  'ai-canvas-expand',
  'colorize',
  'restore-photo',
];

interface CatalogSetting {
  name: string;
  type: string;
  min?: number;
  max?: number;
  default?: unknown;
  enum?: unknown[];
}

/**
 * Where kiln's declaration differs from the catalog on purpose. Each entry: tool.setting → what differs and why.
 * The test fails if one of these stops differing (then remove it) or another difference appears.
 */
const DELIBERATE: Record<string, string> = {
  // sharp takes integer qualities only; 90.5 is refused with VALIDATION_ERROR rather than rounded silently.
  'upscale.quality': 'type integer',
  'noise-removal.quality': 'type integer',
  // Aliases: the effective default (false) is applied in run(), so that "onlyCenterFace wins if both are sent" can see which was sent.
  'enhance-faces.onlyCenterFace': 'default applied in run()',
  'enhance-faces.centerFace': 'default applied in run()',
  // Catalog spelling of intensity: unset means "use intensity".
  'image-enhancement.strength': 'default applied in run()',
  // mode light/heavy preset these three and explicit values win, so unset must be distinguishable from the default.
  'restore-photo.scratchRemoval': 'default applied in run()',
  'restore-photo.fidelity': 'default applied in run()',
  'restore-photo.denoiseStrength': 'default applied in run()',
};

describe('AI tool settings against the catalog', () => {
  const catalog = JSON.parse(readFileSync(path.join(REPO, 'test', 'fixtures', 'catalog.json'), 'utf8')) as {
    tools: { id: string; settings: CatalogSetting[] }[];
  };

  it('every catalog setting with its range, enum and default; nothing else', () => {
    const found: Record<string, string> = {};
    const problems: string[] = [];
    for (const id of AI_TOOLS) {
      const spec = catalog.tools.find((t) => t.id === id)!;
      const ours = new Map(describeSettings(findTool(id)!).map((s) => [s.name, s]));
      // image-enhancement lists `mode` twice (scene modes, and the catalog's single-correction modes): kiln's enum is their union.
      const byName = new Map<string, CatalogSetting>();
      for (const s of spec.settings) {
        const top = s.name.split('.')[0]!;
        const prev = byName.get(top);
        byName.set(top, prev?.enum && s.enum ? { ...prev, enum: [...new Set([...prev.enum, ...s.enum])] } : (prev ?? s));
      }
      assert.deepEqual([...ours.keys()].sort(), [...byName.keys()].sort(), `${id}: setting names`);
      for (const [name, c] of byName) {
        if (c.name !== name) continue; // nested (corrections.*): checked below
        const s = ours.get(name)!;
        const key = `${id}.${name}`;
        if (c.type === 'number' && s.type === 'integer') found[key] = 'type integer';
        else if (s.type !== (c.type === 'enum' ? 'string' : c.type)) problems.push(`${key}: type ${s.type}, catalog ${c.type}`);
        if (c.default !== undefined && s.default === undefined) found[key] = 'default applied in run()';
        else if (JSON.stringify(s.default) !== JSON.stringify(c.default))
          problems.push(`${key}: default ${s.default}, catalog ${c.default}`);
        if (s.min !== c.min) problems.push(`${key}: min ${s.min}, catalog ${c.min}`);
        // z.int() bounds an unbounded integer by the largest safe integer.
        if (s.max !== c.max && !(c.max === undefined && s.max === Number.MAX_SAFE_INTEGER))
          problems.push(`${key}: max ${s.max}, catalog ${c.max}`);
        if (c.enum) assert.deepEqual([...(s.enum ?? [])].sort(), [...c.enum].sort(), `${key}: values`);
      }
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(found, DELIBERATE);
    // The nested corrections of image-enhancement: each a boolean, default true.
    const corr = findTool('image-enhancement')!.settings.parse({}) as { corrections: Record<string, boolean> };
    assert.deepEqual(corr.corrections, {
      exposure: true,
      contrast: true,
      whiteBalance: true,
      saturation: true,
      sharpness: true,
      denoise: true,
    });
  });

  it('applies the catalog defaults that run() owns', () => {
    // restore-photo reports the values it ran with; the others are read from the parsed settings in run().
    const parsed = findTool('restore-photo')!.settings.parse({}) as Record<string, unknown>;
    assert.equal(parsed.scratchRemoval, undefined, 'unset stays unset so mode can preset it');
    assert.equal(findTool('enhance-faces')!.settings.parse({}).onlyCenterFace, undefined);
  });
});

describe('batch routes and CLI flags without models', () => {
  let s: TestServer;
  before(async () => {
    s = await startServer({ dataDir: emptyData, env: { SYNC_WAIT_MS: '120000' } });
  });
  after(() => s.close());

  it('POST …/noise-removal/batch (tier quick) and …/colorize/batch (model opencv): each output decoded, method and model per input', async () => {
    const a = await png('batch-a.png', texture(48, 40, 3), 48, 40);
    const b = await png('batch-b.png', texture(36, 30, 5), 36, 30);
    for (const [tool, settings, method] of [
      ['noise-removal', { tier: 'quick', strength: 80, format: 'webp', quality: 80 }, 'non-local means'],
      ['colorize', { model: 'opencv', intensity: 0.6 }, 'tint'],
    ] as const) {
      const res = await fetch(`${s.url}/api/v1/tools/image/${tool}/batch`, {
        method: 'POST',
        headers: { authorization: `Bearer ${s.token}` },
        body: await form({ files: [await filePart(a), await filePart(b)], settings: JSON.stringify(settings) }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      assert.equal(res.headers.get('x-batch-succeeded'), '2');
      const zip = await readZip(Buffer.from(await res.arrayBuffer()));
      const { items } = JSON.parse(zip.get('manifest.json')!.toString()) as {
        items: { input: string; output: string; data: Record<string, unknown> }[];
      };
      assert.equal(items.length, 2);
      for (const [i, size] of [
        [0, [48, 40]],
        [1, [36, 30]],
      ] as const) {
        const item = items[i]!;
        assert.equal(item.data.method, method, `${tool} ${item.input}`);
        assert.equal(item.data.model, null);
        const m = await sharp(zip.get(item.output)!).metadata();
        assert.deepEqual([m.width, m.height], size);
        if (tool === 'noise-removal') assert.equal(m.format, 'webp');
      }
    }
    // A model tier in a batch: every input answers FEATURE_NOT_INSTALLED, none is filtered classically.
    const res = await fetch(`${s.url}/api/v1/tools/image/noise-removal/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}` },
      body: await form({ files: [await filePart(a)], settings: JSON.stringify({ tier: 'maximum' }) }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal(res.headers.get('x-batch-failed'), '1');
    const zip = await readZip(Buffer.from(await res.arrayBuffer()));
    const [item] = JSON.parse(zip.get('manifest.json')!.toString()).items as {
      output?: string;
      error: { code: string; message: string };
    }[];
    assert.equal(item!.output, undefined);
    assert.equal(item!.error.code, 'FEATURE_NOT_INSTALLED');
    assert.match(item!.error.message, /upscale-enhance/);
  });

  it('POST ai-canvas-expand (tier fast) and restore-photo: the sides and steps the settings ask for, and nothing else', async () => {
    const src = await png('http-expand.png', texture(48, 40, 9), 48, 40);
    const post = async (tool: string, settings: Record<string, unknown>) =>
      api(s, s.token, 'POST', `/api/v1/tools/image/${tool}`, await form({ file: await filePart(src), settings: JSON.stringify(settings) }));
    const expand = await post('ai-canvas-expand', { extendLeft: 16, extendBottom: 8, tier: 'fast', format: 'png' });
    assert.equal(expand.status, 200, expand.text);
    assert.deepEqual([expand.body.data.method, expand.body.data.model], ['patchmatch', null]);
    const dl = await fetch(s.url + expand.body.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } });
    const m = await sharp(Buffer.from(await dl.arrayBuffer())).metadata();
    assert.deepEqual([m.width, m.height], [64, 48]);
    // Every step off: no step runs and the photo comes back as it was (PNG, lossless).
    const off = { scratchRemoval: false, faceEnhancement: false, denoise: false, colorize: false };
    const none = await post('restore-photo', off);
    assert.equal(none.status, 200, none.text);
    assert.deepEqual(none.body.data.steps, []);
    const back = await fetch(s.url + none.body.downloadUrl, { headers: { authorization: `Bearer ${s.token}` } });
    assert.deepEqual((await rgbOf(Buffer.from(await back.arrayBuffer()))).data, (await rgbOf(src)).data);
    // One at a time: the step list follows the settings, in the documented order.
    const steps = async (settings: Record<string, unknown>) =>
      ((await post('restore-photo', { ...off, ...settings })).body.data.steps as { step: string }[]).map((x) => x.step);
    assert.deepEqual(await steps({ denoise: true }), ['denoise']);
    assert.deepEqual(await steps({ denoise: true, denoiseStrength: 0 }), [], 'strength 0 is no denoise');
    assert.deepEqual(await steps({ scratchRemoval: true, colorize: true }), ['scratches', 'colorize']);
    // mode presets scratchRemoval (heavy on, light off) unless it is sent.
    assert.deepEqual(await steps({ mode: 'heavy', scratchRemoval: undefined }), ['scratches']);
    assert.deepEqual(await steps({ mode: 'light', scratchRemoval: undefined }), []);
    assert.deepEqual(await steps({ mode: 'light', scratchRemoval: true }), ['scratches'], 'an explicit value wins over the preset');
  });

  it('erase-object has no batch route (its mask is a second file); the single route and the CLI take the mask', async () => {
    const r = await api(
      s,
      s.token,
      'POST',
      '/api/v1/tools/image/erase-object/batch',
      await form({ files: await filePart(await png('nb.png', texture(16, 16), 16, 16)) }),
    );
    assert.equal(r.status, 404, r.text);
    assert.match(r.body.error.message, /required second file/);
    const W = 120;
    const H = 90;
    const { clean, withObj, mask } = await scene(W, H, 60, 45, 10);
    const input = await png('cli-obj.png', withObj, W, H);
    const maskFile = await png('cli-mask.png', mask, W, H, 1);
    const out = path.join(dir, 'cli-erased.jpg');
    const res = await kiln(['erase-object', input, '--mask', maskFile, '--format', 'jpg', '--quality', '90', '-o', out, '--json'], {
      env: { KILN_DATA_DIR: emptyData },
    });
    assert.equal(res.code, 0, res.stderr);
    const data = JSON.parse(res.stdout).data;
    assert.deepEqual([data.method, data.model], ['patchmatch', null]);
    const got = await rgbOf(out);
    assert.equal((await sharp(out).metadata()).format, 'jpeg');
    // The red disc is gone: the erased area is near the texture around it.
    let red = 0;
    for (let p = 0; p < W * H; p++) if (got.data[p * 3]! > 200 && got.data[p * 3 + 1]! < 70 && clean[p * 3]! < 200) red++;
    assert.equal(red, 0);
    const missing = await kiln(['erase-object', input, '-o', out], { env: { KILN_DATA_DIR: emptyData } });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /--mask/);
  });
});
