/**
 * Load: two connections run a mix of tools (image, PDF, audio, video, document) against a real daemon
 * process without pause, every answer checked by decoding the output; 0 errors allowed, and the
 * daemon's RSS must come back within 1.5× of its warm idle value.
 *
 * `npm test` runs the short profile (KILN_SOAK_SECONDS, 25 s by default); `npm run soak` runs 10 minutes.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { PDFDocument } from 'pdf-lib';
import sharp from 'sharp';
import { tempDir } from '../helpers/fixtures.js';
import { duration, ffprobe, makeAudio, makeVideo } from '../helpers/media.js';
import { type DaemonProcess, rssOf, sampleHealth, startDaemon } from './process.js';

const SECONDS = Number(process.env.KILN_SOAK_SECONDS) || 25;

interface Step {
  route: string;
  file: () => File;
  settings: Record<string, unknown>;
  /** Checks the decoded output; throws on a wrong result. */
  check: (out: Buffer) => Promise<void>;
}

describe(`load: 2 connections × ${SECONDS} s of mixed tools`, () => {
  let d: DaemonProcess;
  const steps: Step[] = [];
  const dir = tempDir('kiln-load-');

  before(async () => {
    const png = await sharp({ create: { width: 320, height: 240, channels: 3, background: '#4080c0' } })
      .png()
      .toBuffer();
    const jpg = await sharp({ create: { width: 300, height: 200, channels: 3, background: '#c08040' } })
      .jpeg()
      .toBuffer();
    const doc = await PDFDocument.create();
    for (let i = 0; i < 3; i++) doc.addPage([300, 400]).drawText(`page ${i + 1}`, { x: 30, y: 300 });
    const pdf = Buffer.from(await doc.save());
    const wav = readFileSync(makeAudio(dir, 'tone.wav', { durationS: 1 }));
    const mp4 = readFileSync(makeVideo(dir, 'clip.mp4', { durationS: 1, width: 160, height: 120 }));
    const file = (b: Buffer, name: string) => () => new File([new Uint8Array(b)], name);
    const probeFile = (out: Buffer, ext: string) => {
      const p = `${dir}/out-${Math.random().toString(36).slice(2)}.${ext}`;
      writeFileSync(p, out);
      return p;
    };
    steps.push(
      {
        route: '/api/v1/tools/image/resize',
        file: file(png, 'a.png'),
        settings: { width: 100 },
        check: async (o) => assert.equal((await sharp(o).metadata()).width, 100),
      },
      {
        route: '/api/v1/tools/image/jpg-to-png',
        file: file(jpg, 'b.jpg'),
        settings: {},
        check: async (o) => assert.deepEqual([(await sharp(o).metadata()).format, (await sharp(o).metadata()).width], ['png', 300]),
      },
      {
        route: '/api/v1/tools/image/rotate',
        file: file(png, 'c.png'),
        settings: { angle: 90 },
        check: async (o) => assert.equal((await sharp(o).metadata()).width, 240),
      },
      {
        route: '/api/v1/tools/pdf/rotate-pdf',
        file: file(pdf, 'd.pdf'),
        settings: { angle: 90 },
        check: async (o) => {
          const p = await PDFDocument.load(o);
          assert.equal(p.getPageCount(), 3);
          assert.equal(p.getPage(0).getRotation().angle, 90);
        },
      },
      {
        route: '/api/v1/tools/pdf/remove-pages',
        file: file(pdf, 'e.pdf'),
        settings: { pages: '2' },
        check: async (o) => assert.equal((await PDFDocument.load(o)).getPageCount(), 2),
      },
      {
        route: '/api/v1/tools/audio/reverse-audio',
        file: file(wav, 'f.wav'),
        settings: {},
        check: async (o) => assert.ok(Math.abs(duration(probeFile(o, 'wav')) - 1) < 0.1),
      },
      {
        route: '/api/v1/tools/video/mute-video',
        file: file(mp4, 'g.mp4'),
        settings: {},
        check: async (o) => {
          const p = ffprobe(probeFile(o, 'mp4'));
          assert.equal(
            p.streams.some((s) => s.codec_type === 'audio'),
            false,
          );
          assert.ok(p.streams.some((s) => s.codec_type === 'video'));
        },
      },
    );
    d = await startDaemon({ env: { SYNC_WAIT_MS: '120000' } });
  });
  after(async () => {
    await d?.stop();
    d?.remove();
  });

  async function runStep(s: Step): Promise<void> {
    const f = new FormData();
    f.append('file', s.file());
    f.append('settings', JSON.stringify(s.settings));
    const auth = { authorization: `Bearer ${d.token}` };
    const res = await fetch(d.url + s.route, { method: 'POST', headers: auth, body: f, signal: AbortSignal.timeout(120_000) });
    const j = (await res.json()) as { downloadUrl?: string };
    assert.equal(res.status, 200, `${s.route}: ${JSON.stringify(j)}`);
    const dl = await fetch(d.url + j.downloadUrl!, { headers: auth });
    assert.equal(dl.status, 200, `${s.route}: download ${dl.status}`);
    await s.check(Buffer.from(await dl.arrayBuffer()));
  }

  it('0 errors, health answers throughout, RSS back within 1.5× of idle', { timeout: (SECONDS + 300) * 1000 }, async () => {
    // Warm: every step once, so each engine's libraries are loaded before the idle figure is taken.
    for (const s of steps) await runStep(s);
    await new Promise((r) => setTimeout(r, 2000));
    const idle = rssOf(d.pid);
    const health = sampleHealth(d.url, 500);
    const errors: string[] = [];
    let done = 0;
    let peak = idle;
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(
      [0, 1].map(async (conn) => {
        for (let i = conn; Date.now() < end; i++) {
          const s = steps[i % steps.length]!;
          try {
            await runStep(s);
            done++;
          } catch (e) {
            errors.push(`${s.route}: ${(e as Error).message.slice(0, 300)}`);
          }
          peak = Math.max(peak, rssOf(d.pid));
        }
      }),
    );
    const times = await health.stop();
    await new Promise((r) => setTimeout(r, 3000));
    const afterRss = rssOf(d.pid);
    const mb = (n: number) => (n / 1048576).toFixed(0);
    console.log(
      `load: ${done} runs in ${SECONDS} s (${(done / SECONDS).toFixed(1)}/s), ${errors.length} errors; health max ${Math.max(...times).toFixed(1)} ms; ` +
        `RSS idle ${mb(idle)} MB, peak ${mb(peak)} MB, after ${mb(afterRss)} MB`,
    );
    assert.deepEqual(errors, []);
    assert.ok(done >= SECONDS / 2, `only ${done} runs`);
    assert.ok(times.every(Number.isFinite), 'the health route always answered');
    // Allocator caching (glibc arenas, libvips' cache, V8's grown heap) keeps some of the peak; a leak grows past it.
    assert.ok(afterRss < idle * 1.5, `RSS after ${mb(afterRss)} MB is more than 1.5× idle ${mb(idle)} MB`);
  });
});
