/** A failure's message names the user's files, never the server's paths (issue #16 item 3). */
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { KilnError } from '../../src/core/errors.js';
import { scrubError, scrubText } from '../../src/core/scrub-paths.js';
import { createWorkspace } from '../../src/core/workspace.js';
import { getTool } from '../../src/tools/index.js';
import { runTool } from '../../src/tools/run-tool.js';
import { tempDir } from '../helpers/fixtures.js';

describe('server paths in messages', () => {
  it('replaces input paths by their names and cuts the private directories', () => {
    const files = [{ path: '/var/lib/kiln/jobs/abc/in/0-clip.mp4', name: 'clip.mp4' }];
    const text = scrubText(
      "/var/lib/kiln/jobs/abc/in/0-clip.mp4: Invalid data found when processing input; see /var/lib/kiln/jobs/abc/out/.x.partial.mp4 and '/var/lib/kiln/jobs/abc/work'",
      files,
      ['/var/lib/kiln/jobs/abc', '/var/lib/kiln'],
    );
    assert.equal(text, "clip.mp4: Invalid data found when processing input; see .x.partial.mp4 and 'work'");
    const err = scrubError(
      new KilnError('UNSUPPORTED_INPUT', 'bad', { details: { file: '/var/lib/kiln/jobs/abc/in/0-clip.mp4' } }),
      files,
      ['/var/lib/kiln'],
    );
    assert.deepEqual(err.details, { file: 'clip.mp4' });
  });

  it('cuts a directory only where a path starts and the directory ends (a ZIP entry ../../../../tmp/x.png stays whole)', () => {
    const dirs = ['/tmp', '/var/lib/kiln/jobs/abc', '/'];
    assert.equal(
      scrubText('invalid relative path: ../../../../tmp/PWNED2.png', [], dirs),
      'invalid relative path: ../../../../tmp/PWNED2.png',
    );
    assert.equal(scrubText('see /var/tmp/a.log and /tmp2/b and /tmp/kiln-x/c.png', [], dirs), 'see /var/tmp/a.log and /tmp2/b and c.png');
    assert.equal(
      scrubText("cannot open '/tmp' or /var/lib/kiln/jobs/abc: denied", [], dirs),
      "cannot open '(work dir)' or (work dir): denied",
    );
  });

  it('an ffprobe failure on a fake video names only the file the user sent', async () => {
    const dir = tempDir('kiln-scrub-');
    const inDir = path.join(dir, 'jobs', '0123', 'in');
    await mkdir(inDir, { recursive: true });
    const fake = path.join(inDir, '0-fake.mp4');
    // An MP4 signature with nothing playable behind it: it passes the sniffing, ffprobe fails on it.
    await writeFile(fake, Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypisom'), Buffer.alloc(64, 7)]));
    const ws = await createWorkspace();
    try {
      const e = await runTool(
        getTool('mute-video'),
        { files: [{ path: fake, name: 'fake.mp4', size: 76 }], extra: {} },
        {},
        {
          workDir: ws.dir,
          dataDir: dir,
        },
      ).catch((x: KilnError) => x);
      assert.ok(e instanceof KilnError, String(e));
      assert.doesNotMatch(e.message, new RegExp(dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      assert.doesNotMatch(e.message, /0-fake\.mp4|\/tmp\//);
    } finally {
      await ws.dispose();
    }
  });
});
