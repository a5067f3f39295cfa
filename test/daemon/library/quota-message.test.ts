/** The quota error's words: sizes too small for "0.00 MB" are given in bytes or KB. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LibraryQuota } from '../../../daemon/library/quota.js';

describe('library quota message', () => {
  // error() only words the numbers; no database is read.
  const quota = new LibraryQuota({} as never, 1048576);

  it('names small sizes in bytes or KB, larger ones in MB', () => {
    const edge = quota.error(1048565, 12, 1048576);
    assert.match(edge.message, /this file needs 12 bytes but 11 bytes of your 1\.00 MB library quota is left/);
    assert.deepEqual(edge.details, { quotaBytes: 1048576, usedBytes: 1048565, neededBytes: 12 });
    assert.match(quota.error(1048576 - 5000, 6000, 1048576).message, /needs 5\.9 KB but 4\.9 KB of your 1\.00 MB/);
    assert.match(quota.error(0, 300_000, 104858).message, /needs 0\.29 MB but 0\.10 MB of your 0\.10 MB/);
  });
});
