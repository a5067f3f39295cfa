import type { RuntimeManifest } from './manifest.js';
import onnxruntime from './onnxruntime.js';

export const RUNTIMES: RuntimeManifest[] = [onnxruntime];

export function findRuntime(id: string): RuntimeManifest | undefined {
  return RUNTIMES.find((r) => r.id === id);
}
