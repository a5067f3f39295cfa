/**
 * The tools' view of feature bundles: is one installed, and the FEATURE_NOT_INSTALLED answer that
 * names what is missing and exactly how to install it (CLI and HTTP).
 */
import { KilnError } from '../core/errors.js';
import type { Tool } from '../core/tool.js';
import { findBundle } from '../ai/bundles/list.js';
import { missingBundles } from '../ai/features.js';
import { ARCHIVE_INDEX } from '../ai/install/archive.js';
import { importOnly as isImportOnly, missingImports } from '../ai/install/installer.js';

export async function isBundleInstalled(dataDir: string, name: string): Promise<boolean> {
  return (await missingBundles(dataDir, [name])).length === 0;
}

export function featureNotInstalled(toolId: string, missing: string[], what?: string): KilnError {
  const many = missing.length > 1;
  // Bundles whose files all lack a verifiable download install only from an archive.
  const importOnly = missing.filter((id) => {
    const b = findBundle(id);
    return b?.files.every(isImportOnly);
  });
  const head = `${toolId}${what ? ` (${what})` : ''} needs the feature bundle${many ? 's' : ''} ${missing.join(', ')}, not installed. `;
  if (importOnly.length) {
    const files = importOnly.flatMap((id) => findBundle(id)!.files.map((f) => f.name));
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

/**
 * The bundles a run of `tool` with these settings needs, checked before any work: the tool's own
 * (`needs.bundles`, unless the tool has a fallback and checks them itself) and the ones its setting
 * values ask for (`needs.bundlesBySetting`).
 */
export async function requireRunBundles(dataDir: string, tool: Tool, settings: Record<string, unknown>): Promise<void> {
  const needs = tool.needs;
  if (needs?.bundles?.length && !needs.bundleFallback) await requireBundles(dataDir, tool.id, needs.bundles);
  for (const [bundle, when] of Object.entries(needs?.bundlesBySetting ?? {})) {
    const setting = Object.keys(when).find((k) => when[k]!.includes(settings[k]));
    if (setting === undefined) continue;
    const missing = await missingBundles(dataDir, [bundle]);
    const value = settings[setting];
    if (missing.length) throw featureNotInstalled(tool.id, missing, value === true ? setting : `${setting} ${String(value)}`);
  }
}

/**
 * For a bundle file with no verifiable download (installed only by import): FEATURE_NOT_INSTALLED
 * naming the bundle (when it is missing) or the file and the import that supplies it. `what` says
 * which part of the tool needs it ("enhance-faces", "upscale faceEnhance").
 */
export async function requireImportedFile(dataDir: string, toolId: string, bundleId: string, file: string, what: string): Promise<void> {
  const missing = await missingBundles(dataDir, [bundleId]);
  if (missing.length) throw featureNotInstalled(toolId, missing);
  const bundle = findBundle(bundleId)!;
  if (!(await missingImports(dataDir, bundle)).some((f) => f.name === file)) return;
  throw new KilnError(
    'FEATURE_NOT_INSTALLED',
    `${what} needs ${file} from the ${bundleId} bundle, which has no verifiable download and is installed only by import: ` +
      `\`kiln features import FILE\` (an archive holding ${ARCHIVE_INDEX} and files/${file}), or as an admin POST /api/v1/admin/features/import. ` +
      `\`kiln features\` lists what is missing.`,
    {
      reason: 'import-only',
      details: {
        tool: toolId,
        bundle: bundleId,
        missingFiles: [file],
        install: { cli: 'kiln features import FILE', http: 'POST /api/v1/admin/features/import' },
      },
    },
  );
}

/** True when `file` of `bundleId` is installed (the bundle current and, for an import file, imported). */
export async function isBundleFileInstalled(dataDir: string, bundleId: string, file: string): Promise<boolean> {
  if ((await missingBundles(dataDir, [bundleId])).length) return false;
  return !(await missingImports(dataDir, findBundle(bundleId)!)).some((f) => f.name === file);
}
