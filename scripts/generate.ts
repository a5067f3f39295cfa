/**
 * Writes the files generated from the tool catalog: shell completions and the man page.
 * `npm run gen` after adding or changing a tool; test/cli/generated.test.ts fails while they are stale.
 * `--check` only compares and exits 1 when a file differs.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PACKAGE_ROOT } from '../src/core/version.js';
import { generatedFiles } from '../src/cli/gen/files.js';

const check = process.argv.includes('--check');
let stale = 0;
for (const [rel, content] of Object.entries(generatedFiles())) {
  const p = path.join(PACKAGE_ROOT, rel);
  let old: string | undefined;
  try {
    old = readFileSync(p, 'utf8');
  } catch {
    old = undefined;
  }
  if (old === content) continue;
  stale++;
  if (check) {
    process.stderr.write(`${rel} is stale\n`);
    continue;
  }
  mkdirSync(path.dirname(p), { recursive: true });
  writeFileSync(p, content);
  process.stderr.write(`wrote ${rel}\n`);
}
if (check && stale) {
  process.stderr.write('Run `npm run gen` and commit the result.\n');
  process.exit(1);
}
