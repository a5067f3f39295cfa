/**
 * The tools' view of feature bundles: is one installed, and the FEATURE_NOT_INSTALLED answer that
 * names what is missing and exactly how to install it (CLI and HTTP).
 */
import { KilnError } from '../core/errors.js';
import { missingBundles } from '../ai/features.js';

export async function isBundleInstalled(dataDir: string, name: string): Promise<boolean> {
  return (await missingBundles(dataDir, [name])).length === 0;
}

export function featureNotInstalled(toolId: string, missing: string[]): KilnError {
  const many = missing.length > 1;
  return new KilnError(
    'FEATURE_NOT_INSTALLED',
    `${toolId} needs the feature bundle${many ? 's' : ''} ${missing.join(', ')}, not installed. ` +
      `Install ${many ? 'them' : 'it'} with \`kiln features install ${toolId}\`, or as an admin with POST /api/v1/admin/tools/${toolId}/features/install.`,
    {
      details: {
        tool: toolId,
        missingBundles: missing,
        install: { cli: `kiln features install ${toolId}`, http: `POST /api/v1/admin/tools/${toolId}/features/install` },
      },
    },
  );
}

export async function requireBundles(dataDir: string, toolId: string, bundles: string[]): Promise<void> {
  const missing = await missingBundles(dataDir, bundles);
  if (missing.length) throw featureNotInstalled(toolId, missing);
}
