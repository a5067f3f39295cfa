/**
 * tempDir's removal when something still writes there: a server that a later `after` hook closes. The
 * suite below runs as its own test file in a child process (node:test), with a shell loop filling the
 * directory until that later hook kills it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';

const FIXTURES = new URL('fixtures.js', import.meta.url).href;

const SUITE = `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { tempDir } from ${JSON.stringify(FIXTURES)};
let writer;
describe('a directory still written to', () => {
  const dir = tempDir('kiln-busy-');
  writeFileSync(process.env.REPORT, dir);
  it('starts a writer', async () => {
    writer = spawn('sh', ['-c', 'mkdir -p "$0/sub"; i=0; while :; do : > "$0/sub/f$i"; i=$((i+1)); done', dir], { stdio: 'ignore' });
    writeFileSync(process.env.REPORT + '.pid', String(writer.pid));
    await new Promise((r) => setTimeout(r, 300));
  });
  after(() => {
    writer.kill('SIGKILL');
    writeFileSync(process.env.REPORT, dir + '\\nlater hook ran');
  });
});
`;

describe('tempDir', () => {
  const work = mkdtempSync(path.join(process.env.KILN_TMP_DIR ?? tmpdir(), 'kiln-tempdir-test-'));
  after(() => {
    // A writer the suite failed to stop (the old behaviour) must not outlive this test.
    try {
      process.kill(Number(readFileSync(path.join(work, 'report.txt.pid'), 'utf8')), 'SIGKILL');
    } catch {
      /* stopped already, or never started */
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('does not fail the suite while a later hook has yet to stop the writer; the directory goes at exit', () => {
    const file = path.join(work, 'busy.test.mjs');
    const report = path.join(work, 'report.txt');
    writeFileSync(file, SUITE);
    // Before the fix the removal threw ENOTEMPTY, the later hook was skipped, the writer ran on and the
    // file hung until the runner's timeout: 60 s is far beyond the 1–2 s the suite takes.
    // Without NODE_TEST_CONTEXT, which would make the child report to this runner instead of running.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const r = spawnSync(process.execPath, ['--test', file], { env: { ...env, REPORT: report }, timeout: 60_000, encoding: 'utf8' });
    const [dir, hook] = readFileSync(report, 'utf8').split('\n');
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.equal(hook, 'later hook ran');
    assert.equal(existsSync(dir!), false, `${dir} is left behind`);
  });
});
