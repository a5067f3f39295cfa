/**
 * `kiln watch` as a person or a service would run it: files arriving slowly, corrupt files, many files
 * at once, and a SIGTERM in the middle — nothing processed twice, nothing lost, nothing half-written.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { copyFile, mkdir, open, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { PDFDocument } from '@cantoo/pdf-lib';
import sharp from 'sharp';
import { KILN } from '../helpers/cli.js';
import { makeImage, makePhoto, tempDir } from '../helpers/fixtures.js';
import { ffprobe, makeVideo } from '../helpers/media.js';

interface Watcher {
  child: ChildProcessWithoutNullStreams;
  lines: Record<string, any>[];
  stderr: () => string;
  /** Resolves once the watcher has made its first scan (files added later are new). */
  ready(): Promise<void>;
  /** Resolves once `n` JSON lines have arrived. */
  until(n: number, ms?: number): Promise<void>;
  exit: Promise<number | null>;
}

function startWatch(args: string[], cwd: string): Watcher {
  const child = spawn(process.execPath, [KILN, 'watch', ...args, '--json'], { cwd, env: process.env });
  const lines: Record<string, any>[] = [];
  let buf = '';
  let err = '';
  const waiters: (() => void)[] = [];
  child.stdout.on('data', (b: Buffer) => {
    buf += b.toString();
    let i: number;
    while ((i = buf.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buf.slice(0, i)));
      buf = buf.slice(i + 1);
      for (const w of waiters.splice(0)) w();
    }
  });
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    child,
    lines,
    stderr: () => err,
    exit,
    async ready() {
      for (let i = 0; i < 300 && !err.includes('Ctrl-C stops'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.match(err, /Ctrl-C stops/);
    },
    async until(n, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (lines.length < n) {
        if (Date.now() > deadline) throw new Error(`waited for ${n} lines, got ${lines.length}: ${err}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), new Promise((r) => setTimeout(r, 200))]);
      }
    },
  };
}

async function stop(w: Watcher): Promise<number | null> {
  w.child.kill('SIGTERM');
  return w.exit;
}

/**
 * `kiln watch <dir>/in <args> -o <dir>/out` in a new temp dir, once its first scan is done; `fill` puts
 * in the watched folder what is there at start (taken with --initial).
 */
async function watching(args: string[], fill?: (inDir: string) => Promise<unknown>) {
  const dir = tempDir('kiln-watch-');
  const inDir = path.join(dir, 'in');
  const outDir = path.join(dir, 'out');
  await mkdir(inDir);
  await fill?.(inDir);
  const w = startWatch([inDir, ...args, '-o', outDir], dir);
  await w.ready();
  return { dir, inDir, outDir, w };
}

/**
 * Waits until ffmpeg has `file` open and the run is past its probe (ffprobe runs beside ffmpeg's start,
 * transcodeVideo), so the file may go while the encode goes on. ffmpeg's command line shows in /proc
 * before it has loaded its ~200 libraries and opened its input: on a loaded machine the file went in
 * between, and ffmpeg answered "No such file or directory".
 */
async function untilTranscoding(file: string, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  const opened = (pid: string) => {
    try {
      return readdirSync(`/proc/${pid}/fd`).some((fd) => {
        try {
          return readlinkSync(`/proc/${pid}/fd/${fd}`) === file;
        } catch {
          return false;
        }
      });
    } catch {
      return false;
    }
  };
  while (Date.now() < end) {
    let probing = false;
    let encoding = false;
    for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        if (!argv.includes(file)) continue;
        const name = path.basename(argv[0]!);
        if (name === 'ffprobe') probing = true;
        if (name === 'ffmpeg' && opened(pid)) encoding = true;
      } catch {
        // Gone meanwhile.
      }
    }
    if (encoding && !probing) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`ffmpeg did not start on ${file} within ${timeoutMs} ms`);
}

const listFiles = (dir: string) => (existsSync(dir) ? readdirSync(dir).filter((n) => !n.startsWith('.')) : []);

describe('kiln watch', () => {
  it('processes a file written slowly in chunks once, complete', async () => {
    const { dir, inDir, w } = await watching(['--tool', 'resize', '--width', '100', '--stable-ms', '800', '--interval-ms', '100']);
    const src = await makePhoto(dir, 'big.png', 1000, 800);
    const bytes = await readFile(src);
    const fh = await open(path.join(inDir, 'big.png'), 'w');
    const chunk = Math.ceil(bytes.length / 5);
    for (let i = 0; i < bytes.length; i += chunk) {
      await fh.write(bytes.subarray(i, i + chunk));
      await new Promise((r) => setTimeout(r, 300));
    }
    await fh.close();
    await w.until(1);
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(w.lines.length, 1, 'processed exactly once');
    assert.equal(w.lines[0]!.ok, true, JSON.stringify(w.lines[0]));
    const meta = await sharp(path.join(dir, w.lines[0]!.output)).metadata();
    assert.equal(meta.width, 100);
    assert.equal(meta.height, 80);
    assert.ok(existsSync(path.join(inDir, '.done', 'big.png')));
    assert.deepEqual(listFiles(inDir), []);
    await stop(w);
  });

  it('moves a corrupt file to .failed/ with its error beside it, and takes files present at start with --initial', async () => {
    const { dir, inDir, w } = await watching(['--preset', 'png-to-jpg', '--initial', '-r', '--stable-ms', '200'], async (inDir) => {
      await mkdir(path.join(inDir, 'sub'));
      await writeFile(path.join(inDir, 'broken.jpg'), 'not a jpeg at all');
      await makeImage(path.join(inDir, 'sub'), 'ok.png', 40, 20);
      // Office's owner file of an open document and an editor's backup: not inputs, left where they are
      // (they were processed, failed, and moved to .failed/ under Word's feet).
      await writeFile(path.join(inDir, '~$report.jpg'), 'owner file');
      await writeFile(path.join(inDir, 'photo.jpg~'), 'backup');
    });
    await w.until(2);
    const failed = w.lines.find((l) => !l.ok)!;
    assert.equal(failed.error.code, 'UNSUPPORTED_INPUT');
    const err = JSON.parse(await readFile(path.join(inDir, '.failed', 'broken.jpg.error.json'), 'utf8'));
    assert.equal(err.error.code, 'UNSUPPORTED_INPUT');
    assert.ok(existsSync(path.join(inDir, '.failed', 'broken.jpg')));
    assert.equal((await sharp(path.join(dir, 'out', 'sub', 'ok.jpg')).metadata()).format, 'jpeg', 'sub-folders are mirrored');
    assert.equal(await stop(w), 5, 'exit status 5 when a file failed');
    assert.equal(w.lines.length, 2, JSON.stringify(w.lines));
    assert.deepEqual(listFiles(inDir).sort(), ['photo.jpg~', 'sub', '~$report.jpg']);
  });

  it('processes 50 files two at a time', async () => {
    const { dir, inDir, outDir, w } = await watching([
      '--tool',
      'rotate',
      '--angle',
      '90',
      '-j',
      '2',
      '--stable-ms',
      '200',
      '--interval-ms',
      '100',
    ]);
    const one = await makeImage(dir, 'one.png', 30, 10);
    for (let i = 0; i < 50; i++) await copyFile(one, path.join(inDir, `f${i}.png`));
    await w.until(50);
    assert.equal(w.lines.filter((l) => l.ok).length, 50, JSON.stringify(w.lines.filter((l) => !l.ok)));
    assert.equal(listFiles(outDir).length, 50);
    assert.equal(listFiles(path.join(inDir, '.done')).length, 50);
    assert.equal((await sharp(path.join(outDir, 'f7.png')).metadata()).height, 30);
    await stop(w);
  });

  it('--keep with several files at a time remembers each, and reports each', async () => {
    const { dir, inDir, outDir, w } = await watching([
      '--tool',
      'rotate',
      '--angle',
      '90',
      '--keep',
      '-j',
      '4',
      '--stable-ms',
      '200',
      '--interval-ms',
      '100',
    ]);
    const one = await makeImage(dir, 'one.png', 30, 10);
    for (let i = 0; i < 16; i++) await copyFile(one, path.join(inDir, `k${i}.png`));
    // Runs ending together renamed the same temp state file: ENOENT, and those files had no line.
    await w.until(16, 20_000);
    await stop(w);
    assert.equal(w.lines.filter((l) => l.ok).length, 16, w.stderr());
    assert.doesNotMatch(w.stderr(), /ENOENT/);
    assert.equal(Object.keys(JSON.parse(await readFile(path.join(inDir, '.kiln-watch.json'), 'utf8'))).length, 16);
    assert.equal(listFiles(inDir).length, 16, 'the originals stay');

    // Started again after a file was deleted: the state forgets it (it only ever grew), keeps the others
    // (none is processed again) and adds the new one.
    await rm(path.join(inDir, 'k0.png'));
    const again = startWatch([inDir, '--tool', 'rotate', '--angle', '90', '-o', outDir, '--keep', '--stable-ms', '200'], dir);
    await again.ready();
    await copyFile(one, path.join(inDir, 'k99.png'));
    await again.until(1, 20_000);
    await stop(again);
    assert.deepEqual(
      again.lines.map((l) => l.input),
      ['k99.png'],
    );
    const state = Object.keys(JSON.parse(await readFile(path.join(inDir, '.kiln-watch.json'), 'utf8')));
    assert.equal(state.length, 16);
    assert.ok(state.includes('k99.png') && !state.includes('k0.png'), state.join(' '));
  });

  it('stops on SIGTERM mid-run without losing or half-writing a file', async () => {
    const { inDir, outDir, w } = await watching(
      ['--tool', 'convert-video', '--format', 'webm', '-j', '2', '--initial', '--stable-ms', '100'],
      async (inDir) => {
        for (let i = 0; i < 4; i++) makeVideo(inDir, `clip${i}.mp4`, { width: 320, height: 240, durationS: 8, audio: false });
      },
    );
    // Stop while the first runs are in flight.
    for (let i = 0; i < 100 && !/clip/.test(w.stderr()) && !existsSync(outDir); i++) await new Promise((r) => setTimeout(r, 100));
    await new Promise((r) => setTimeout(r, 700));
    await stop(w);
    const done = listFiles(path.join(inDir, '.done'));
    const waiting = listFiles(inDir);
    assert.equal(done.length + waiting.length, 4, `every original is somewhere: done ${done} waiting ${waiting}`);
    const outputs = listFiles(outDir);
    assert.equal(outputs.length, done.length, `one output per finished file: ${outputs}`);
    assert.equal(readdirSync(outDir).filter((n) => n.includes('partial')).length, 0, 'no partial output');
    for (const o of outputs) assert.equal(ffprobe(path.join(outDir, o)).format.format_name.includes('webm'), true);
  });

  it("a later file of the same name gets its own output, not the first one's", async () => {
    const { dir, inDir, outDir, w } = await watching(['--tool', 'resize', '--width', '20', '--stable-ms', '100', '--interval-ms', '100']);
    await makeImage(inDir, 'same.png', 40, 40);
    await w.until(1);
    await makeImage(inDir, 'same.png', 80, 40);
    await w.until(2);
    await stop(w);
    assert.deepEqual(listFiles(path.join(inDir, '.done')).sort(), ['same-2.png', 'same.png']);
    // The second replaced the first: one output, 20×10, for two originals.
    assert.deepEqual(listFiles(outDir).sort(), ['same-2.png', 'same.png']);
    assert.equal((await sharp(path.join(outDir, 'same.png')).metadata()).height, 20);
    assert.equal((await sharp(path.join(outDir, 'same-2.png')).metadata()).height, 10);
    assert.deepEqual(
      w.lines.map((l) => l.output),
      [path.relative(dir, path.join(outDir, 'same.png')), path.relative(dir, path.join(outDir, 'same-2.png'))],
    );
  });

  it('a file deleted while it waits its turn is no failure', async () => {
    const { dir, inDir, w } = await watching(['--tool', 'convert-video', '--format', 'webm', '--stable-ms', '100', '--interval-ms', '100']);
    // A long run first, so the next file waits in the queue (made beside the folder: ffmpeg writing it
    // there slowly was taken before it was whole, and again after).
    makeVideo(dir, 'long.mp4', { width: 320, height: 240, durationS: 8, audio: false });
    await copyFile(path.join(dir, 'long.mp4'), path.join(inDir, 'long.mp4'));
    await new Promise((r) => setTimeout(r, 800));
    makeVideo(dir, 'short.mp4', { width: 64, height: 48, durationS: 1, audio: false });
    await copyFile(path.join(dir, 'short.mp4'), path.join(inDir, 'short.mp4'));
    await new Promise((r) => setTimeout(r, 600));
    await rm(path.join(inDir, 'short.mp4'));
    await w.until(1);
    await new Promise((r) => setTimeout(r, 500));
    // It failed with NOT_FOUND, could not be moved to .failed/, and made the exit status 5.
    assert.equal(await stop(w), 0, w.stderr());
    assert.deepEqual(
      w.lines.map((l) => [l.input, l.ok]),
      [['long.mp4', true]],
    );
    assert.equal(existsSync(path.join(inDir, '.failed')), false);
  });

  /**
   * `kiln watch` converting an 8 s clip to WebM, 2 s into its run (taken after `stableMs` of quiet;
   * the clip takes longer than 2 s to encode, so nothing is written yet).
   */
  async function convertingLongVideo(stableMs: number) {
    const watched = await watching([
      '--tool',
      'convert-video',
      '--format',
      'webm',
      '--stable-ms',
      String(stableMs),
      '--interval-ms',
      '100',
    ]);
    const { dir, inDir, outDir } = watched;
    makeVideo(dir, 'long.mp4', { width: 320, height: 240, durationS: 8, audio: false });
    await copyFile(path.join(dir, 'long.mp4'), path.join(inDir, 'long.mp4'));
    // A fixed wait passed before the run began on a loaded machine.
    await untilTranscoding(path.join(inDir, 'long.mp4'));
    assert.deepEqual(readdirSync(outDir), [], 'still running');
    return watched;
  }

  it('a file deleted during its run still has its output reported, and nothing to move aside', async () => {
    // Deleted while ffmpeg encodes it (it has the file open and finishes the job).
    const { dir, inDir, outDir, w } = await convertingLongVideo(100);
    await rm(path.join(inDir, 'long.mp4'));
    // Moving it to .done/ failed with ENOENT: no line, the output unreported, a raw error logged.
    await w.until(1);
    assert.equal(await stop(w), 0, w.stderr());
    const [line] = w.lines;
    assert.equal(line!.ok, true);
    assert.equal(line!.output, path.relative(dir, path.join(outDir, 'long.webm')));
    assert.equal(line!.movedTo, undefined);
    assert.doesNotMatch(w.stderr(), /ENOENT/);
    assert.equal(ffprobe(path.join(outDir, 'long.webm')).format.format_name.includes('webm'), true);
    assert.deepEqual(listFiles(path.join(inDir, '.done')), []);
  });

  it('--json names every file of a tool that writes several, so each input can be matched to its own', async () => {
    const { dir, inDir, outDir, w } = await watching([
      '--tool',
      'pdf-to-image',
      '--dpi',
      '72',
      '--stable-ms',
      '100',
      '--interval-ms',
      '100',
    ]);
    // Two inputs of the same name: the second's pages get free names beside the first's.
    for (const widths of [
      [100, 200],
      [300, 400, 500],
    ]) {
      const doc = await PDFDocument.create();
      for (const width of widths) doc.addPage([width, 100]);
      await writeFile(path.join(inDir, 'doc.pdf'), await doc.save());
      await w.until(widths.length === 2 ? 1 : 2);
    }
    await stop(w);
    // The line said only "out": which of the five pages came from which PDF was anyone's guess.
    const pages = w.lines.map((l) => l.outputs as string[]);
    assert.deepEqual(
      pages.map((list) => list.length),
      [2, 3],
      JSON.stringify(w.lines),
    );
    for (const [i, list] of pages.entries())
      for (const [j, rel] of list.entries()) {
        assert.equal(path.dirname(path.resolve(dir, rel)), outDir);
        assert.equal(
          (await sharp(path.resolve(dir, rel)).metadata()).width,
          [
            [100, 200],
            [300, 400, 500],
          ][i]![j],
        );
      }
    assert.equal(listFiles(outDir).length, 5);
  });

  it('a file still being written during its run is taken again once complete; the output of the part is removed', async () => {
    // The writer goes on after a pause longer than the quiet period, while the run is under way: a
    // 16-byte `free` box, which players and ffmpeg skip.
    const { dir, inDir, outDir, w } = await convertingLongVideo(300);
    const box = Buffer.alloc(16);
    box.writeUInt32BE(16, 0);
    box.write('free', 4, 'latin1');
    await writeFile(path.join(inDir, 'long.mp4'), box, { flag: 'a' });
    const appendedAt = Date.now();
    await w.until(1);
    // The reported run is one that began after the file was complete.
    assert.ok(Date.now() - w.lines[0]!.ms >= appendedAt, `run of ${w.lines[0]!.ms} ms began before the append`);
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(await stop(w), 0, w.stderr());
    // It was moved to .done/ whole while its output came from the first part, and was not taken again.
    assert.match(w.stderr(), /long\.mp4 changed while it was processed/);
    assert.deepEqual(
      w.lines.map((l) => [l.input, l.ok, l.output]),
      [['long.mp4', true, path.relative(dir, path.join(outDir, 'long.webm'))]],
    );
    assert.deepEqual(listFiles(outDir), ['long.webm']);
    assert.equal(ffprobe(path.join(outDir, 'long.webm')).format.format_name.includes('webm'), true);
    const done = await readFile(path.join(inDir, '.done', 'long.mp4'));
    assert.deepEqual(done.subarray(done.length - 16), box, 'the whole file was processed');
  });

  it('refuses an output folder where its outputs would be watched again', async () => {
    const dir = tempDir('kiln-watch-');
    const inDir = path.join(dir, 'in');
    await mkdir(inDir);
    // The folder itself, and a sub-folder of a recursive watch: each output would be a new input (it
    // looped, in/out/out/out/…, or moved every output to .failed/).
    // Links count where they lead: an output folder linked into the watched one looped in/sub/sub/sub/….
    const link = path.join(dir, 'link-to-in');
    await symlink(inDir, link);
    for (const args of [
      [inDir, '-o', inDir],
      [inDir, '-o', path.join(inDir, 'out'), '--recursive'],
      [inDir, '-o', link],
      [inDir, '-o', path.join(link, 'out'), '--recursive'],
      [link, '-o', path.join(inDir, 'out'), '--recursive'],
    ]) {
      const w = startWatch([...args, '--tool', 'resize', '--width', '10'], dir);
      // A watcher that starts anyway is stopped, and fails the test.
      const timer = setTimeout(() => w.child.kill('SIGTERM'), 10_000);
      const code = await w.exit;
      clearTimeout(timer);
      assert.equal(code, 2, w.stderr());
      assert.match(w.stderr(), /outputs would be taken as new files/);
    }
    assert.deepEqual(readdirSync(inDir), [], 'nothing written into the watched folder');
  });

  it('stops with an error when the watched folder is deleted', async () => {
    const { inDir, w } = await watching(['--tool', 'resize', '--width', '10', '--interval-ms', '100']);
    await rm(inDir, { recursive: true });
    // It logged the failed scan ten times a second and never ended.
    const timer = setTimeout(() => w.child.kill('SIGTERM'), 10_000);
    const code = await w.exit;
    clearTimeout(timer);
    // NOT_FOUND's exit status.
    assert.equal(code, 1, w.stderr());
    assert.match(w.stderr(), /is gone/);
    assert.doesNotMatch(w.stderr(), /scanning/);
  });
});
