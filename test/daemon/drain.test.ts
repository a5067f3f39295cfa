/**
 * Stopping `kiln serve` (a real process) while its LibreOffice pool warms up: whatever step the warm-up
 * is at, no soffice.bin of that daemon (found by its profile dir, in the daemon's TMPDIR) outlives it,
 * its profiles are gone, and the process exits 0. And a client waiting synchronously on a transcode when
 * SIGTERM comes gets the whole result. (New work refused with 503 during the drain, and the waiter
 * cancelled at the end of the grace period getting 503 daemon-shutdown, are in serve.test.ts.)
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { processesNaming, startDaemonProcess } from '../helpers/daemon-process.js';
import { tempDir } from '../helpers/fixtures.js';
import { duration, ffprobe, makeVideo, stream } from '../helpers/media.js';

const dir = tempDir('kiln-drain-');
let clipFile: string | undefined;
/** About 10 s of work for compress-video on this machine (8.5 s measured with nothing else running). */
const longClip = () => (clipFile ??= makeVideo(dir, 'long.mp4', { width: 1280, height: 720, durationS: 20, audio: false }));

/** compress-video of `clip`, answered synchronously (or as `prefer` says). */
async function transcode(d: { url: string; auth: Record<string, string> }, clip: string, prefer?: string): Promise<Response> {
  const fd = new FormData();
  fd.append('file', new File([await readFile(clip)], 'clip.mp4'));
  fd.append('settings', JSON.stringify({ quality: 'strong' }));
  return fetch(`${d.url}/api/v1/tools/video/compress-video`, {
    method: 'POST',
    headers: { ...d.auth, ...(prefer ? { prefer } : {}) },
    body: fd,
  });
}

async function untilRunning(d: { url: string; auth: Record<string, string> }): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const list = (await (await fetch(`${d.url}/api/v1/jobs?status=running`, { headers: d.auth })).json()) as { jobs: unknown[] };
    if (list.jobs.length > 0) return;
    await sleep(50);
  }
  assert.fail('no job started running');
}
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
      // Watched from the listening line on: the warm-up starts just before it, and its first step (a
      // profile made by one short soffice run) was over before a sign-in under load had finished.
      const d = await startDaemonProcess(
        path.join(dir, `data-${slug}`),
        { TMPDIR: officeTmp, KILN_WARM_ENGINES: 'true' },
        { signIn: false },
      );
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

describe('SIGTERM on an idle daemon', () => {
  it('exits 0 within seconds: nothing left holding the process', async () => {
    const d = await startDaemonProcess(path.join(dir, 'data-idle'), { KILN_WARM_ENGINES: 'false' });
    const signalled = Date.now();
    d.child.kill('SIGTERM');
    assert.equal(await d.exited, 0, d.stderr());
    // It took 6 s while a spent 5 s timer of the job service's close still held the event loop.
    assert.ok(Date.now() - signalled < 4000, `exited ${Date.now() - signalled} ms after SIGTERM`);
  });
});

describe('SIGTERM while clients wait', () => {
  it('lets a transcode a client waits on finish: 200 with its result, kept for the next start', async (t) => {
    const clip = longClip();
    const dataDir = path.join(dir, 'data-sync');
    const env = { SHUTDOWN_GRACE_S: '120', SYNC_WAIT_MS: '300000', KILN_WARM_ENGINES: 'false' };
    const d = await startDaemonProcess(dataDir, env);
    let signalled = 0;
    let downloadUrl: string;
    try {
      const answer = transcode(d, clip);
      await untilRunning(d);
      d.child.kill('SIGTERM');
      signalled = Date.now();
      const res = await answer;
      const text = await res.text();
      assert.equal(res.status, 200, text);
      downloadUrl = (JSON.parse(text) as { downloadUrl: string }).downloadUrl;
      t.diagnostic(`the transcode ran on for ${Date.now() - signalled} ms after SIGTERM`);
    } finally {
      if (!signalled) d.child.kill('SIGTERM');
    }
    assert.equal(await d.exited, 0, d.stderr());
    const again = await startDaemonProcess(dataDir, env);
    try {
      const res = await fetch(`${again.url}${downloadUrl}`, { headers: again.auth });
      assert.equal(res.status, 200);
      const out = path.join(dir, 'sync-out.mp4');
      writeFileSync(out, Buffer.from(await res.arrayBuffer()));
      assert.ok(stream(ffprobe(out), 'video'), 'a video stream');
      assert.ok(Math.abs(duration(out) - 20) < 0.5, `the whole clip (${duration(out)} s)`);
    } finally {
      again.child.kill('SIGTERM');
    }
    assert.equal(await again.exited, 0);
  });

  it('sends a download in progress whole before it exits', async () => {
    const d = await startDaemonProcess(path.join(dir, 'data-download'), { KILN_WARM_ENGINES: 'false' });
    let signalled = false;
    try {
      // 24 MB of noise as a WAV: far more than the socket buffers hold, and nothing to compress.
      const pcm = randomBytes(24 * 1024 * 1024);
      const header = Buffer.alloc(44);
      header.write('RIFF', 0);
      header.writeUInt32LE(36 + pcm.length, 4);
      header.write('WAVEfmt ', 8);
      header.writeUInt32LE(16, 16);
      header.writeUInt16LE(1, 20); // PCM
      header.writeUInt16LE(1, 22); // mono
      header.writeUInt32LE(48000, 24);
      header.writeUInt32LE(96000, 28);
      header.writeUInt16LE(2, 32);
      header.writeUInt16LE(16, 34);
      header.write('data', 36);
      header.writeUInt32LE(pcm.length, 40);
      const wav = Buffer.concat([header, pcm]);
      const fd = new FormData();
      fd.append('file', new File([wav], 'noise.wav'));
      const up = await fetch(`${d.url}/api/v1/files`, { method: 'POST', headers: d.auth, body: fd });
      const upText = await up.text();
      assert.equal(up.status, 201, upText);
      const { id } = JSON.parse(upText) as { id: string };
      const res = await fetch(`${d.url}/api/v1/files/${id}/download`, { headers: d.auth });
      assert.equal(res.status, 200);
      const reader = res.body!.getReader();
      const chunks: Uint8Array[] = [];
      const first = await reader.read();
      chunks.push(first.value!);
      // Nothing runs: without waiting for answers being sent, the daemon would close now.
      d.child.kill('SIGTERM');
      signalled = true;
      await sleep(1500);
      for (let r = await reader.read(); !r.done; r = await reader.read()) chunks.push(r.value);
      const got = Buffer.concat(chunks);
      assert.equal(got.length, wav.length, 'the whole file');
      assert.ok(got.equals(wav), 'byte-identical');
    } finally {
      if (!signalled) d.child.kill('SIGTERM');
    }
    assert.equal(await d.exited, 0, d.stderr());
  });
});

describe('SIGTERM with more work than the grace period', () => {
  it('answers every synchronous waiter, running or queued, 503 daemon-shutdown (never 500), and exits 0', async () => {
    const clip = longClip();
    const d = await startDaemonProcess(path.join(dir, 'data-grace'), {
      SHUTDOWN_GRACE_S: '1',
      SYNC_WAIT_MS: '300000',
      JOB_CONCURRENCY: '1',
      KILN_WARM_ENGINES: 'false',
    });
    let signalled = false;
    try {
      const running = transcode(d, clip);
      await untilRunning(d);
      const queued = transcode(d, clip);
      // The second one is in the queue behind the first (one job at a time).
      for (let i = 0; i < 200; i++) {
        const list = (await (await fetch(`${d.url}/api/v1/jobs?status=queued`, { headers: d.auth })).json()) as { jobs: unknown[] };
        if (list.jobs.length > 0) break;
        await sleep(50);
      }
      d.child.kill('SIGTERM');
      signalled = true;
      for (const [which, answer] of [
        ['running', running],
        ['queued', queued],
      ] as const) {
        const res = await answer;
        const body = (await res.json()) as { error?: { reason?: string } };
        assert.equal(res.status, 503, `${which}: ${JSON.stringify(body)}`);
        assert.equal(body.error?.reason, 'daemon-shutdown', which);
      }
    } finally {
      if (!signalled) d.child.kill('SIGTERM');
    }
    assert.equal(await d.exited, 0, d.stderr());
  });
});
