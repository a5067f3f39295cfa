/**
 * Warm engines stop when idle, so an idle daemon stays small (issue 17): the LibreOffice pool and the
 * shared Chromium stop after their idle time and start again on the next job; `kiln serve` starts no
 * engine at boot unless KILN_WARM_ENGINES=true, and stops a warmed one after KILN_ENGINE_IDLE_S.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { engineIdleMs } from '../../src/cli/commands/serve.js';
import { chromiumPid, keepChromiumWarm, shutdownChromium, withPage } from '../../src/engines/chromium.js';
import { onEngineStopped } from '../../src/engines/idle-stop.js';
import { OFFICE_TARGETS, officeConvert, officePoolStatus, setOfficeIdleStop, shutdownOffice } from '../../src/engines/office.js';
import { KILN } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';
import { PAGE_TASKS } from '../helpers/page-tasks.js';

const dir = tempDir('kiln-idle-');

after(async () => {
  await Promise.allSettled([shutdownOffice(), shutdownChromium()]);
});

/** True while `pid` runs (a zombie waiting to be reaped counts as gone). */
function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/\) Z /.test(stat);
  } catch {
    return false;
  }
}

async function until(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) assert.fail(`timed out waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Child processes of `ppid` whose command matches `re`. */
function children(ppid: number, re: RegExp): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${d}/stat`, 'utf8');
    } catch {
      continue;
    }
    const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const m = /\) (\S) (\d+)/.exec(stat);
    if (m && m[1] !== 'Z' && Number(m[2]) === ppid && re.test(comm)) out.push(Number(d));
  }
  return out;
}

async function toPdf(name: string): Promise<Buffer> {
  const src = path.join(dir, `${name}.rtf`);
  writeFileSync(src, `{\\rtf1\\ansi{\\fonttbl\\f0\\fswiss Helvetica;}\\f0\\pard ${name}\\par}`);
  const out = await officeConvert(src, 'rtf', { target: OFFICE_TARGETS['pdf-writer'], outExt: 'pdf', workDir: dir });
  return readFileSync(out);
}

describe('engines stop when idle', { concurrency: 1 }, () => {
  test('KILN_ENGINE_IDLE_S: seconds, never, default 300 s, a warning for nonsense', () => {
    const saved = process.env.KILN_ENGINE_IDLE_S;
    try {
      delete process.env.KILN_ENGINE_IDLE_S;
      assert.equal(engineIdleMs(), 300_000);
      process.env.KILN_ENGINE_IDLE_S = '2.5';
      assert.equal(engineIdleMs(), 2500);
      process.env.KILN_ENGINE_IDLE_S = 'never';
      assert.equal(engineIdleMs(), Number.POSITIVE_INFINITY);
      process.env.KILN_ENGINE_IDLE_S = 'soon';
      const warnings: string[] = [];
      assert.equal(
        engineIdleMs((m) => warnings.push(m)),
        300_000,
      );
      assert.match(warnings[0] ?? '', /KILN_ENGINE_IDLE_S=soon/);
    } finally {
      if (saved === undefined) delete process.env.KILN_ENGINE_IDLE_S;
      else process.env.KILN_ENGINE_IDLE_S = saved;
    }
  });

  test('the LibreOffice pool stops after its idle time and restarts for the next conversion', async () => {
    setOfficeIdleStop(1500);
    const stopped: string[] = [];
    const unwatch = onEngineStopped((e) => stopped.push(e));
    try {
      assert.equal((await toPdf('first')).subarray(0, 5).toString(), '%PDF-');
      const pid = officePoolStatus().pids[0];
      assert.ok(pid && running(pid), 'an instance runs after the conversion');
      await until(() => !running(pid), 30_000, 'the idle instance to stop');
      assert.equal(officePoolStatus().pids[0], undefined);
      // The daemon trims its heap on this (daemon/server.ts).
      assert.deepEqual(stopped, ['office']);
      assert.equal((await toPdf('second')).subarray(0, 5).toString(), '%PDF-');
      const again = officePoolStatus().pids[0];
      assert.ok(again && again !== pid && running(again), 'a new instance did the second conversion');
    } finally {
      unwatch();
      setOfficeIdleStop(Number.POSITIVE_INFINITY);
      await shutdownOffice();
    }
  });

  test('Chromium stops after its idle time and relaunches for the next page', async () => {
    keepChromiumWarm(1000);
    const stopped: string[] = [];
    const unwatch = onEngineStopped((e) => stopped.push(e));
    try {
      const text = await withPage({}, { module: PAGE_TASKS, name: 'textOf', args: { html: '<p id="x">idle</p>', selector: '#x' } });
      assert.equal(text, 'idle');
      const pid = await chromiumPid();
      assert.ok(pid && running(pid), 'the browser runs after the job');
      await until(() => !running(pid), 20_000, 'the idle browser to stop');
      assert.equal(await chromiumPid(), undefined);
      await until(() => stopped.length > 0, 10_000, 'the stop to be announced');
      assert.deepEqual(stopped, ['chromium']);
      const progress: number[] = [];
      const sum = await withPage(
        {},
        { module: PAGE_TASKS, name: 'evaluateSum', args: { x: 1, y: 1 } },
        { progress: (p) => progress.push(p) },
      );
      assert.equal(sum, 2);
      assert.deepEqual(progress, [50]);
    } finally {
      unwatch();
      await shutdownChromium();
    }
  });

  test("a browser kept warm opens the next job's page in advance, in a fresh context", async () => {
    keepChromiumWarm(Number.POSITIVE_INFINITY);
    const state = (options: object, setCookie = false) =>
      withPage<{ openedAt: number; cookies: number }>(options, { module: PAGE_TASKS, name: 'pageState', args: { setCookie } });
    try {
      const first = await state({}, true);
      assert.equal(first.cookies, 0);
      // The spare opens once the job has ended; give it time on a loaded machine.
      await new Promise((r) => setTimeout(r, 3000));
      const sent = Date.now();
      const second = await state({});
      assert.ok(second.openedAt < sent, `the page was opened ${(second.openedAt - sent).toFixed(0)} ms after the job was sent`);
      assert.equal(second.cookies, 0, 'the spare context is as fresh as a new one');
      // Other context options: a page of their own, opened for the job.
      await new Promise((r) => setTimeout(r, 3000));
      const sentOther = Date.now();
      const other = await state({ viewport: { width: 320, height: 200 } });
      assert.ok(other.openedAt >= sentOther - 5, 'a job with other options does not get the spare');
    } finally {
      await shutdownChromium();
    }
  });

  test('playwright-core runs in the worker only: this thread never loads it, errors keep their code', async () => {
    keepChromiumWarm(Number.POSITIVE_INFINITY);
    try {
      await assert.rejects(withPage({}, { module: PAGE_TASKS, name: 'refuse', args: { reason: 'test-reason' } }), {
        code: 'UNSUPPORTED_INPUT',
        reason: 'test-reason',
      });
      const controller = new AbortController();
      const waiting = withPage({}, { module: PAGE_TASKS, name: 'waitForever', args: {} }, { signal: controller.signal });
      setTimeout(() => controller.abort(), 300);
      await assert.rejects(waiting, { code: 'CANCELLED' });
      await assert.rejects(withPage({}, { module: PAGE_TASKS, name: 'waitForever', args: {} }, { timeoutMs: 500 }), { code: 'TIMEOUT' });
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((k) => k.includes('playwright-core'));
      assert.deepEqual(loaded, [], 'playwright-core was loaded outside the worker');
      const pid = await chromiumPid();
      assert.ok(pid && running(pid), 'the browser is our child process');
      await shutdownChromium();
      await until(() => !running(pid), 10_000, 'the browser to stop with its worker');
    } finally {
      await shutdownChromium();
    }
  });

  test('kiln serve: no engine at boot by default; a warmed pool stops after KILN_ENGINE_IDLE_S', async () => {
    for (const warm of [false, true]) {
      const env: NodeJS.ProcessEnv = { ...process.env, KILN_HTTP_LOG: 'false', KILN_ENGINE_IDLE_S: '2' };
      for (const k of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'KILN_WARM_ENGINES']) delete env[k];
      if (warm) env.KILN_WARM_ENGINES = 'true';
      const child = spawn(process.execPath, [KILN, 'serve', '--port', '0', '--data-dir', path.join(dir, `serve-${warm}`)], { env });
      let err = '';
      child.stderr.on('data', (b: Buffer) => (err += b));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      try {
        await until(() => err.includes('kiln listening on'), 60_000, `the daemon to listen: ${err}`);
        const office = () => children(child.pid!, /soffice/);
        if (!warm) {
          await new Promise((r) => setTimeout(r, 3000));
          assert.deepEqual(office(), [], 'LibreOffice started at boot without KILN_WARM_ENGINES=true');
        } else {
          await until(() => office().length > 0, 60_000, 'the warm-up to start LibreOffice');
          await until(() => office().length === 0, 90_000, 'the idle pool to stop');
        }
      } finally {
        child.kill('SIGTERM');
      }
      assert.equal(await exited, 0, err);
    }
  });
});
