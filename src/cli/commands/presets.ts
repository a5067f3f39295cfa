import { findTool } from '../../tools/index.js';
import { PRESETS } from '../../tools/presets.js';

export function presetsCommand(o: { json?: boolean }): void {
  const rows = PRESETS.map((p) => ({ ...p, available: !!findTool(p.tool) }));
  if (o.json) {
    process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
    return;
  }
  const w = Math.max(...rows.map((r) => r.id.length));
  for (const r of rows) {
    process.stdout.write(
      `  ${r.id.padEnd(w)}  ${r.accept.join(' ')} → ${r.outputExtension}  (${r.tool}${Object.keys(r.fixed).length ? ' ' + JSON.stringify(r.fixed) : ''})${r.available ? '' : '  [base tool not built yet]'}\n`,
    );
  }
}
