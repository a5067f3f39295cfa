/**
 * Feature bundles (models and runtimes installed on demand). A bundle counts as installed when its
 * directory under `<dataDir>/ai/bundles/<name>` holds a `manifest.json` written by the installer
 * after verification.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';

export function bundleDir(dataDir: string, name: string): string {
  return path.join(dataDir, 'ai', 'bundles', name);
}

export async function isBundleInstalled(dataDir: string, name: string): Promise<boolean> {
  try {
    await access(path.join(bundleDir(dataDir, name), 'manifest.json'));
    return true;
  } catch {
    return false;
  }
}

export async function requireBundles(dataDir: string, toolId: string, bundles: string[]): Promise<void> {
  const missing: string[] = [];
  for (const b of bundles) if (!(await isBundleInstalled(dataDir, b))) missing.push(b);
  if (missing.length) {
    throw new KilnError(
      'FEATURE_NOT_INSTALLED',
      `${toolId} needs the feature bundle${missing.length > 1 ? 's' : ''} ${missing.join(', ')}. An admin installs ${missing.length > 1 ? 'them' : 'it'} with POST /api/v1/admin/tools/${toolId}/features/install.`,
      {
        details: { tool: toolId, missingBundles: missing },
      },
    );
  }
}
