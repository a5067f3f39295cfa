/**
 * The interactive mode: unit tests of the ink app (ink-testing-library), and the real `kiln` binary in
 * a pseudo-terminal (tmux): keys in, screen and output file checked.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { render } from 'ink-testing-library';
import sharp from 'sharp';
import { App } from '../../src/cli/interactive/app.js';
import { choices, search } from '../../src/cli/interactive/catalog.js';
import { completePath } from '../../src/cli/interactive/path-complete.js';
import { kiln, KILN } from '../helpers/cli.js';
import { makeImage, tempDir } from '../helpers/fixtures.js';

const dir = tempDir('kiln-interactive-');
const KEY = { enter: '\r', tab: '\t', down: '\u001B[B', up: '\u001B[A', backspace: '\u007F', ctrlR: '\u0012', esc: '\u001B' };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits for the screen to match. Then a short pause: ink (re)attaches its input listener in an effect
 * after a new screen is drawn, and ink-testing-library's stdin drops what is written before that.
 */
async function until(get: () => string | undefined, re: RegExp, ms = 15_000): Promise<string> {
  const end = Date.now() + ms;
  let last = '';
  while (Date.now() < end) {
    last = get() ?? '';
    if (re.test(last)) {
      await sleep(100);
      return last;
    }
    await sleep(50);
  }
  assert.fail(`screen never matched ${re}:\n${last}`);
}

describe('interactive mode', () => {
  it('completes paths like a shell', async () => {
    const d = path.join(dir, 'pc');
    mkdirSync(path.join(d, 'sub'), { recursive: true });
    await makeImage(d, 'photo-a.png', 10, 10);
    await makeImage(d, 'photo-b.png', 10, 10);
    assert.deepEqual(completePath('ph', d), { value: 'photo-', candidates: ['photo-a.png', 'photo-b.png'] });
    assert.deepEqual(completePath('photo-a', d), { value: 'photo-a.png', candidates: [] });
    assert.deepEqual(completePath('su', d), { value: 'sub/', candidates: [] });
    assert.deepEqual(completePath('zz', d), { value: 'zz', candidates: [] });
    assert.equal(completePath(`${d}/photo-b`).value, `${d}/photo-b.png`);
  });

  it('search ranks id matches first and needs every word', () => {
    const all = choices();
    assert.equal(search(all, 'resize')[0]!.name, 'resize');
    assert.ok(search(all, 'scale image').some((c) => c.name === 'resize'));
    assert.equal(search(all, 'zzzz-no-such').length, 0);
  });

  it('picks a tool, a file, validates settings, runs and shows the output (ink-testing-library)', async () => {
    const d = path.join(dir, 'ink');
    mkdirSync(d, { recursive: true });
    await makeImage(d, 'photo.png', 80, 40);
    let exitCode: number | undefined;
    const app = render(<App cwd={d} onExit={(c) => (exitCode = c)} />);
    try {
      await until(app.lastFrame, /Tool:/);
      app.stdin.write('resiz');
      await until(app.lastFrame, /❯ resize/);
      app.stdin.write(KEY.enter);
      await until(app.lastFrame, /Input files/);
      app.stdin.write('nope.png');
      await sleep(50);
      app.stdin.write(KEY.enter);
      await until(app.lastFrame, /nope\.png is not a file/);
      for (let i = 0; i < 8; i++) app.stdin.write(KEY.backspace);
      await sleep(50);
      app.stdin.write('pho');
      await sleep(50);
      app.stdin.write(KEY.tab);
      await until(app.lastFrame, /File: photo\.png/);
      app.stdin.write(KEY.enter);
      await until(app.lastFrame, /✔ photo\.png/);
      app.stdin.write(KEY.enter);
      await until(app.lastFrame, /--width/);
      // An out-of-range value is caught by the tool's schema before anything runs.
      app.stdin.write('0');
      await sleep(50);
      app.stdin.write(KEY.ctrlR);
      await until(app.lastFrame, /--width.*✖/);
      app.stdin.write(KEY.backspace);
      await sleep(50);
      app.stdin.write('8');
      await sleep(50);
      app.stdin.write(KEY.ctrlR);
      const done = await until(app.lastFrame, /✔ photo\.png → /);
      const out = /→ (\S+)/.exec(done)![1]!;
      assert.equal((await sharp(path.join(d, out)).metadata()).width, 8);
      app.stdin.write('q');
      await sleep(100);
      assert.equal(exitCode, 0);
    } finally {
      app.unmount();
    }
  });

  it('without a terminal, `kiln` prints the help and exits 0', async () => {
    const r = await kiln([]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage: kiln/);
  });

  it('runs in a real terminal (tmux): search, Tab completion, settings, progress, output', async (t) => {
    if (spawnSync('sh', ['-c', 'command -v tmux']).status !== 0) return t.skip('tmux is not installed (apt-get install tmux)');
    const d = path.join(dir, 'tmux');
    mkdirSync(d, { recursive: true });
    await makeImage(d, 'picture.jpg', 120, 60);
    const session = `kiln-test-${process.pid}`;
    // A private tmux server: the session gets this process's environment, and nobody else's sessions are touched.
    // CI=true (as .ci/run has it) makes kiln print help instead of opening the interactive mode: a person is simulated here.
    const tmux = (...args: string[]) => spawnSync('tmux', ['-L', session, ...args], { encoding: 'utf8' });
    const screen = () => tmux('capture-pane', '-t', session, '-p').stdout;
    const keys = async (...k: string[]) => {
      tmux('send-keys', '-t', session, ...k);
      await sleep(150);
    };
    const r = tmux(
      'new-session',
      '-d',
      '-s',
      session,
      '-x',
      '120',
      '-y',
      '40',
      '-c',
      d,
      `env -u CI ${process.execPath} ${KILN}; echo "EXIT=$?"; sleep 60`,
    );
    assert.equal(r.status, 0, r.stderr);
    try {
      await until(screen, /Tool:/, 30_000);
      await keys('-l', 'resize');
      await until(screen, /❯ resize\s/);
      await keys('Enter');
      await until(screen, /Input files/);
      await keys('-l', 'pic');
      await keys('Tab');
      await until(screen, /File: picture\.jpg/);
      await keys('Enter');
      await until(screen, /✔ picture\.jpg/);
      await keys('Enter');
      await until(screen, /--width/);
      await keys('-l', '30');
      await keys('C-r');
      const done = await until(screen, /✔ picture\.jpg → picture-resize\.jpg|✔ picture\.jpg → \S+/, 30_000);
      const out = /→ (\S+)/.exec(done)![1]!;
      assert.ok(existsSync(path.join(d, out)), done);
      const m = await sharp(path.join(d, out)).metadata();
      assert.deepEqual([m.width, m.height, m.format], [30, 15, 'jpeg']);
      await keys('q');
      await until(screen, /EXIT=0/);
    } finally {
      tmux('kill-server');
    }
  });
});
