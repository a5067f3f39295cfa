/**
 * Stopping `kiln serve` (a real process) while its LibreOffice pool warms up: whatever step the warm-up
 * is at, no soffice.bin of that daemon (found by its profile dir, in the daemon's TMPDIR) outlives it,
 * its profiles are gone, and the process exits 0. The drain of running jobs is in serve.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { processesNaming, startDaemonProcess } from '../helpers/daemon-process.js';
import { tempDir } from '../helpers/fixtures.js';

const dir = tempDir('kiln-drain-');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The warm-up's steps, each recognised by its soffice.bin command line. */
const STEPS = [
  { step: 'profile creation', arg: '--terminate_after_init' },
  { step: 'instance start', arg: 'private:factory/swriter' },
  { step: 'warm-up conversion', arg: '--convert-to' },
];

describe('SIGTERM during the LibreOffice warm-up', () => {
  for (const { step, arg } of STEPS) {
    it(`stops every soffice.bin of the daemon before it exits (during the ${step})`, async () => {
      const slug = step.replace(/\W+/g, '-');
      // The profiles live in the daemon's temp dir: this path names exactly this daemon's engines.
      const officeTmp = path.join(dir, `office-tmp-${slug}`);
      mkdirSync(officeTmp);
      const d = await startDaemonProcess(path.join(dir, `data-${slug}`), { TMPDIR: officeTmp, KILN_WARM_ENGINES: 'true' });
      let seen = false;
      try {
        for (let i = 0; i < 6000 && !seen; i++) {
          seen = processesNaming(officeTmp).some((p) => p.cmd.includes(arg));
          if (!seen) await sleep(10);
        }
      } finally {
        d.child.kill('SIGTERM');
      }
      const stopped = Date.now();
      assert.ok(seen, `never saw the ${step} (${arg})`);
      assert.equal(await d.exited, 0, d.stderr());
      // No job runs: nothing to wait for but the engines (a start-up left polling held it 60 s).
      assert.ok(Date.now() - stopped < 20_000, `exited ${Date.now() - stopped} ms after SIGTERM`);
      assert.deepEqual(processesNaming(officeTmp), [], 'no soffice.bin left when the daemon has exited');
      await sleep(3000);
      assert.deepEqual(processesNaming(officeTmp), [], 'none started after the daemon exited');
      assert.deepEqual(
        readdirSync(officeTmp).filter((n) => n.startsWith('kiln-office-')),
        [],
        'the profiles are removed',
      );
    });
  }
});
