/** Installs a real bundle for a test suite; downloads are cached by digest in one shared directory. */
import os from 'node:os';
import path from 'node:path';
import { findBundle } from '../../src/ai/bundles/list.js';
import { installBundle } from '../../src/ai/install/installer.js';

export const TEST_AI_CACHE = process.env.KILN_AI_CACHE_DIR || path.join(os.tmpdir(), 'kiln-ai-cache');

export async function installForTest(bundleId: string, dataDir: string): Promise<void> {
  process.env.KILN_AI_CACHE_DIR = TEST_AI_CACHE;
  const b = findBundle(bundleId);
  if (!b) throw new Error(`no bundle ${bundleId}`);
  await installBundle(dataDir, b);
}
