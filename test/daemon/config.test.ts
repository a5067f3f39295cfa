/** Environment values resolveConfig refuses at start (USAGE_ERROR) rather than failing on later. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { resolveConfig } from '../../daemon/config.js';
import { KilnError } from '../../src/core/errors.js';

const usage = (env: NodeJS.ProcessEnv, name: RegExp) =>
  assert.throws(
    () => resolveConfig({ dataDir: '/tmp/kiln-config-test' }, env),
    (e: unknown) => e instanceof KilnError && e.code === 'USAGE_ERROR' && name.test(e.message),
  );

describe('daemon configuration from the environment', () => {
  it('KILN_HEARTBEAT_MS: Redis gets whole milliseconds within range, never a value it refuses after start', () => {
    for (const bad of ['1e300', '1e309', '-5', 'yes', '10'])
      usage({ KILN_HEARTBEAT_MS: bad }, /KILN_HEARTBEAT_MS must be a number ≥ 50 and ≤ 3600000/);
    assert.equal(resolveConfig({ dataDir: '/tmp/kiln-config-test' }, { KILN_HEARTBEAT_MS: '100.5' }).heartbeatMs % 1, 0);
    assert.equal(resolveConfig({ dataDir: '/tmp/kiln-config-test' }, {}).heartbeatMs, 5000);
  });

  it('FEATURE_IMPORT_MAX_MB: a bad value is refused at start, no longer replaced by 8192 without a word', () => {
    for (const bad of ['8G', '0', '-1', '1e309', 'yes']) usage({ FEATURE_IMPORT_MAX_MB: bad }, /FEATURE_IMPORT_MAX_MB must be a number/);
    assert.equal(resolveConfig({ dataDir: '/tmp/kiln-config-test' }, { FEATURE_IMPORT_MAX_MB: '0.5' }).featureImportMaxMb, 0.5);
    assert.equal(resolveConfig({ dataDir: '/tmp/kiln-config-test' }, {}).featureImportMaxMb, 8192);
  });
});
