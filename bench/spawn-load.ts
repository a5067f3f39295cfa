/**
 * Engine starts in a daemon that holds much memory, as one with an AI model loaded does: GET
 * /api/v1/health every 5 ms while merge-pdf requests of 20 files (~60 qpdf runs each) go back to back,
 * against a `kiln serve` that forks its children (KILN_SPAWN=fork) and one on the automatic choice
 * (posix_spawn once forks have cost 10 ms; src/core/posix-spawn.ts). Both carry the same ballast,
 * 600 MB made resident at start-up through `--require`: a fork copies the page tables of all of it
 * while the event loop waits. Sides alternate round by round.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { httpCall } from './goal-daemon.js';
import type { Bench, BenchOptions } from './lib.js';
import { startServe } from './serve-process.js';

const BALLAST_MB = 600;

interface Round {
  merges: number;
  health: number[];
  rssMb: number;
}

async function round(mode: string | undefined, ballast: string, body: Buffer, boundary: string, seconds: number): Promise<Round> {
  const s = await startServe({ ...(mode ? { KILN_SPAWN: mode } : {}), NODE_OPTIONS: `--require ${ballast}` });
  try {
    let stop = false;
    let merges = 0;
    const merger = (async () => {
      while (!stop) {
        const { status } = await httpCall(
          `${s.base}/api/v1/tools/pdf/merge-pdf`,
          'POST',
          { ...s.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
          body,
        );
        if (status !== 200) throw new Error(`merge-pdf: HTTP ${status}`);
        merges++;
      }
    })();
    const health: number[] = [];
    const end = Date.now() + seconds * 1000;
    try {
      while (Date.now() < end) {
        const t = performance.now();
        if ((await httpCall(`${s.base}/api/v1/health`, 'GET', {})).status !== 200) throw new Error('health: not 200');
        health.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      stop = true;
      await merger;
    }
    return { merges, health, rssMb: s.rssMb() };
  } finally {
    await s.stop();
  }
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? NaN;

export async function spawnLoadCase(b: Bench, o: BenchOptions, parts: string[]): Promise<void> {
  const seconds = o.quick ? 6 : 15;
  const rounds = o.quick ? 1 : 2;
  b.heading(`merge-pdf (20 files) beside GET /api/v1/health every 5 ms, daemon holding ${BALLAST_MB} MB more, ${seconds} s a side`);
  const ballast = path.join(o.outDir, 'ballast.cjs');
  writeFileSync(ballast, `globalThis.__kilnBenchBallast = Buffer.alloc(${BALLAST_MB} * 1024 * 1024, 1);\n`);
  const boundary = 'kilnbenchspawnboundary';
  const body = Buffer.concat([
    ...parts.flatMap((p) => [
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${path.basename(p)}"\r\ncontent-type: application/pdf\r\n\r\n`,
      ),
      readFileSync(p),
      Buffer.from('\r\n'),
    ]),
    Buffer.from(`--${boundary}--\r\n`),
  ]);
  const sides = [
    ['spawn-fork', 'KILN_SPAWN=fork (node forks)', 'fork'],
    ['spawn-auto', 'automatic (posix_spawn)', undefined],
  ] as const;
  const got = new Map<string, Round[]>(sides.map(([key]) => [key, []]));
  try {
    for (let i = 0; i < rounds; i++)
      for (const [key, , mode] of sides) got.get(key)!.push(await round(mode, ballast, body, boundary, seconds));
  } catch (e) {
    b.result.failures.push(`spawn-load: ${(e as Error).message}`);
    b.o.print(`  spawn load    FAILED  ${(e as Error).message}`);
    return;
  }
  for (const [key, label] of sides) {
    const rs = got.get(key)!;
    const health = rs.flatMap((r) => r.health);
    const perMerge =
      (seconds * 1000 * rs.length) /
      Math.max(
        1,
        rs.reduce((n, r) => n + r.merges, 0),
      );
    b.result.ms[key] = perMerge;
    b.o.print(
      `  ${label.padEnd(46)} ${perMerge.toFixed(1).padStart(9)} ms/merge  health p50 ${quantile(health, 0.5).toFixed(1)} p99 ${quantile(health, 0.99).toFixed(1)} ms  rss ${Math.max(...rs.map((r) => r.rssMb)).toFixed(0)} MB`,
    );
  }
  b.ratios([['spawn-auto', 'spawn-fork', 'time per merge beside the health checks']]);
}
