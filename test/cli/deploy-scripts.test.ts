/**
 * What `kiln deploy` writes on the server, checked without a server: the systemd unit passes
 * `systemd-analyze verify` for install paths with spaces and `%`, and the time a stop may take follows
 * SHUTDOWN_GRACE_S in the unit and in the detached start script alike.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { promisify } from 'node:util';
import { detachedStartScript, type Layout, systemdUnit } from '../../src/cli/deploy/remote-scripts.js';
import { tempDir } from '../helpers/fixtures.js';

const run = promisify(execFile);
const dir = tempDir('kiln-deploy-scripts-');

/** An install dir whose bin/kiln is a stand-in that runs until it is stopped. */
function fakeInstall(name: string): string {
  const root = path.join(dir, name);
  mkdirSync(path.join(root, 'current', 'bin'), { recursive: true });
  const bin = path.join(root, 'current', 'bin', 'kiln');
  writeFileSync(bin, '#!/bin/sh\nexec sleep 120\n');
  chmodSync(bin, 0o755);
  return root;
}

const layout = (over: Partial<Layout>): Layout => ({
  dir: fakeInstall('plain'),
  dataDir: path.join(dir, 'data'),
  port: 1349,
  host: '0.0.0.0',
  node: process.execPath,
  ...over,
});

const setting = (unit: string, key: string) => unit.split('\n').filter((l) => l.startsWith(`${key}=`));

describe('kiln deploy: the files it writes on the server', () => {
  it('the systemd unit is valid for an install dir with spaces and a percent sign', async (t) => {
    const verify = await run('systemd-analyze', ['--version']).catch(() => undefined);
    if (!verify) return t.skip('systemd-analyze is not installed');
    const l = layout({
      dir: fakeInstall('my kiln 100%'),
      dataDir: path.join(dir, 'data 50%'),
      env: [['PUBLIC_HOSTS', 'a.example, b.example']],
    });
    const file = path.join(dir, 'kiln.service');
    writeFileSync(file, systemdUnit(l, 'root'));
    // It used to be `ExecStart=/…/my kiln 100%/current/bin/kiln serve`: systemd ran "/…/my" and read "%/" as a specifier.
    const r = await run('systemd-analyze', ['verify', file]).then(
      (x) => ({ code: 0, stderr: x.stderr }),
      (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
    );
    assert.doesNotMatch(r.stderr, /kiln\.service/, r.stderr);
    const unit = readFileSync(file, 'utf8');
    assert.deepEqual(setting(unit, 'Environment').slice(2, 3), ['Environment="DATA_DIR=' + path.join(dir, 'data 50%%') + '"']);
  });

  it('TimeoutStopSec covers SHUTDOWN_GRACE_S and a margin: the default 30 s, or what --env sets', () => {
    assert.deepEqual(setting(systemdUnit(layout({}), 'kiln'), 'TimeoutStopSec'), ['TimeoutStopSec=45']);
    // A raised grace used to be cut at 45 s by systemd's SIGKILL: the transcodes it was raised for were lost.
    const raised = systemdUnit(layout({ env: [['SHUTDOWN_GRACE_S', '300']] }), 'kiln');
    assert.deepEqual(setting(raised, 'TimeoutStopSec'), ['TimeoutStopSec=315']);
  });

  it('a detached upgrade waits for the old daemon to drain for the default grace, not 20 s', { timeout: 90_000 }, async () => {
    const l = layout({ dataDir: path.join(dir, 'detached') });
    mkdirSync(l.dataDir, { recursive: true });
    // The running daemon: takes 23 s to drain after SIGTERM (less than the default 30 s grace), then says so.
    const drained = path.join(dir, 'drained');
    const old = spawn('sh', ['-c', `trap 'sleep 23; echo yes > ${drained}; exit 0' TERM; while :; do sleep 1; done`], {
      detached: true,
      stdio: 'ignore',
    });
    writeFileSync(path.join(l.dataDir, 'kiln.pid'), `${old.pid}\n`);
    const script = await run('sh', ['-c', detachedStartScript(l)], { timeout: 80_000 });
    const started = /started=detached pid=(\d+)/.exec(script.stdout);
    try {
      assert.ok(started, script.stdout + script.stderr);
      assert.equal(readFileSync(drained, 'utf8').trim(), 'yes', 'the old daemon finished its drain, not killed at 20 s');
    } finally {
      if (started) process.kill(Number(started[1]), 'SIGKILL');
      try {
        process.kill(-old.pid!, 'SIGKILL');
      } catch {}
    }
  });
});
