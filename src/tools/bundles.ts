/**
 * The tools' view of feature bundles: is one installed, and the FEATURE_NOT_INSTALLED answer that
 * names what is missing and exactly how to install it (CLI and HTTP).
 */
import { KilnError } from '../core/errors.js';
import { missingBundles } from '../ai/features.js';
import { findBundle } from '../ai/bundles/list.js';
import { importOnlyFiles } from '../ai/bundles/manifest.js';

export async function isBundleInstalled(dataDir: string, name: string): Promise<boolean> {
  return (await missingBundles(dataDir, [name])).length === 0;
}

export function featureNotInstalled(toolId: string, missing: string[], what?: string): KilnError {
  const many = missing.length > 1;
  // Bundles whose models have no verifiable download install only from an archive.
  const importOnly = missing.filter((id) => {
    const b = findBundle(id);
    return b && importOnlyFiles(b).length > 0;
  });
  const head = `${toolId}${what ? ` (${what})` : ''} needs the feature bundle${many ? 's' : ''} ${missing.join(', ')}, not installed. `;
  if (importOnly.length) {
    const files = importOnly.flatMap((id) => importOnlyFiles(findBundle(id)!));
    return new KilnError(
      'FEATURE_NOT_INSTALLED',
      `${head}${importOnly.join(', ')} installs only from an archive (${files.join(', ')}: no download kiln can verify). ` +
        'Import it with `kiln features import FILE`, or as an admin with POST /api/v1/admin/features/import; docs/AI.md says how to make the archive.',
      {
        details: {
          tool: toolId,
          missingBundles: missing,
          importOnly: files,
          install: { cli: 'kiln features import FILE', http: 'POST /api/v1/admin/features/import' },
        },
      },
    );
  }
  return new KilnError(
    'FEATURE_NOT_INSTALLED',
    head +
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
