import { GROUP_TITLES, SECTIONS, isBatchable } from '../../core/tool.js';
import { describeSettings } from '../../core/settings.js';
import { defaultDataDir } from '../../core/paths.js';
import { TOOLS } from '../../tools/index.js';

export async function toolsCommand(o: { json?: boolean; section?: string }): Promise<void> {
  const tools = TOOLS.filter((t) => !o.section || t.section === o.section);
  if (o.json) {
    const { missingBundles, missingToolFiles } = await import('../../ai/features.js');
    const dataDir = defaultDataDir();
    const rows = [];
    for (const t of tools) {
      const missing = t.needs?.bundles?.length ? await missingBundles(dataDir, t.needs.bundles) : [];
      const files = t.needs?.bundles?.length ? await missingToolFiles(dataDir, t.id, t.needs.bundles) : [];
      rows.push({
        id: t.id,
        section: t.section,
        group: GROUP_TITLES[t.group],
        summary: t.summary,
        input: t.input,
        settings: describeSettings(t),
        needs: t.needs ?? {},
        batch: isBatchable(t),
        output: t.output,
        // AI tools exist before their bundles are installed; this says whether one runs here now.
        available: missing.length === 0 && files.length === 0,
        missingBundles: missing,
        // Files with no verifiable download the tool needs, installed only by import (`kiln features import`).
        ...(files.length && { missingFiles: files }),
      });
    }
    process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    return;
  }
  for (const section of SECTIONS) {
    const list = tools.filter((t) => t.section === section);
    if (!list.length) continue;
    process.stdout.write(`\n${section} (${list.length})\n`);
    const w = Math.max(...list.map((t) => t.id.length));
    for (const t of list) process.stdout.write(`  ${t.id.padEnd(w)}  ${t.summary}\n`);
  }
}
