/** Shared by the a-*.test.ts suites: run a tool in a fresh workspace and decode what it wrote. */
import { copyFile } from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import { getTool } from '../../../src/tools/index.js';
import { inputFile, runTool, type RunOutcome } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';
import type { InputFile } from '../../../src/core/tool.js';

export async function runA(
  id: string,
  files: string[],
  settings: Record<string, unknown>,
  extra: Record<string, string[]> = {},
  keepDir?: string,
): Promise<RunOutcome & { kept?: string }> {
  const ws = await createWorkspace();
  try {
    const ex: Record<string, InputFile[]> = {};
    for (const [k, v] of Object.entries(extra)) ex[k] = await Promise.all(v.map((p) => inputFile(p)));
    const out = await runTool(getTool(id), { files: await Promise.all(files.map((f) => inputFile(f))), extra: ex }, settings, {
      workDir: ws.dir,
      dataDir: keepDir ?? ws.dir,
    });
    let kept: string | undefined;
    if (out.output && keepDir) {
      kept = path.join(keepDir, `${id}-${Date.now()}-${Math.random().toString(36).slice(2)}-${out.output.name}`);
      await copyFile(out.output.path, kept);
    }
    return { ...out, kept };
  } finally {
    await ws.dispose();
  }
}

export async function rawOf(file: string) {
  const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return {
    data,
    width: info.width,
    height: info.height,
    px: (x: number, y: number) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)],
  };
}

/** A solid image, or one built from a per-pixel function. */
export async function solid(
  dir: string,
  name: string,
  w: number,
  h: number,
  fn: (x: number, y: number) => [number, number, number, number?],
): Promise<string> {
  const buf = Buffer.alloc(w * h * 4);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      const [r, g, b, a = 255] = fn(x, y);
      buf.set([r, g, b, a], (y * w + x) * 4);
    }
  const p = path.join(dir, name);
  await sharp(buf, { raw: { width: w, height: h, channels: 4 } }).toFile(p);
  return p;
}
