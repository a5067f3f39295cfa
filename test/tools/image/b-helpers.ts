/** Shared by the b-*.test.ts suites: run a tool through runTool in a throw-away workspace. */
import { cpSync, mkdtempSync } from 'node:fs';
import path from 'node:path';
import { getTool } from '../../../src/tools/index.js';
import { inputFile, runTool, type RunOutcome } from '../../../src/tools/run-tool.js';
import { createWorkspace } from '../../../src/core/workspace.js';

export interface Ran extends RunOutcome {
  /** A copy of the output that outlives the run's workspace. */
  file?: string;
}

export async function runB(
  dir: string,
  id: string,
  files: string[],
  settings: Record<string, unknown>,
  extra: Record<string, string[]> = {},
): Promise<Ran> {
  const ws = await createWorkspace();
  try {
    const ex: Record<string, Awaited<ReturnType<typeof inputFile>>[]> = {};
    for (const [k, v] of Object.entries(extra)) ex[k] = await Promise.all(v.map((p) => inputFile(p)));
    const out = await runTool(getTool(id), { files: await Promise.all(files.map((f) => inputFile(f))), extra: ex }, settings, {
      workDir: ws.dir,
      dataDir: dir,
    });
    let file: string | undefined;
    if (out.output) {
      const keep = mkdtempSync(path.join(dir, 'out-'));
      file = path.join(keep, out.output.name);
      cpSync(out.output.path, file);
    }
    return { ...out, file };
  } finally {
    await ws.dispose();
  }
}

/** Entries of a ZIP file with their bytes. */
export async function unzip(file: string): Promise<{ name: string; data: Buffer }[]> {
  const yauzl = (await import('yauzl')).default;
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true }, (err, zip) => {
      if (err || !zip) return reject(err);
      const out: { name: string; data: Buffer }[] = [];
      zip.on('entry', (e: { fileName: string }) => {
        zip.openReadStream(e as never, (e2, stream) => {
          if (e2 || !stream) return reject(e2);
          const chunks: Buffer[] = [];
          stream.on('data', (c: Buffer) => chunks.push(c));
          stream.on('end', () => {
            out.push({ name: e.fileName, data: Buffer.concat(chunks) });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(out));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

/** A solid-colour PNG fixture. */
export async function solid(
  dir: string,
  name: string,
  width: number,
  height: number,
  color: { r: number; g: number; b: number; alpha?: number },
): Promise<string> {
  const sharp = (await import('sharp')).default;
  const p = path.join(dir, name);
  await sharp({ create: { width, height, channels: 4, background: { alpha: 1, ...color } } })
    .png()
    .toFile(p);
  return p;
}

/** RGBA of one pixel. */
export async function pixel(file: string | Buffer, x: number, y: number): Promise<number[]> {
  const sharp = (await import('sharp')).default;
  const { data, info } = await sharp(file).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  const i = (y * info.width + x) * 4;
  return [data[i]!, data[i + 1]!, data[i + 2]!, data[i + 3]!];
}

export function near(a: number[], b: number[], tol = 6): boolean {
  return a.length === b.length && a.every((v, i) => Math.abs(v - b[i]!) <= tol);
}
