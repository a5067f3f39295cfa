/**
 * The goal rows that run kiln as a command: start-up, one resize, a batch, and a video transcode, each
 * against the engine's own command line doing the same work.
 */
import { existsSync, readdirSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { type Row, interleave, median, ms, row } from './goals.js';
import { dir, KILN_BIN, kilnCli, requireOutput, sh, shAsync, type BenchOptions } from './lib.js';

// The CLI rows run `kiln` as a user does — the file itself, whose shell part sets up the environment
// (bin/kiln) before it starts node — with the node of this bench first on PATH.
if (!process.env.PATH?.startsWith(path.dirname(process.execPath) + path.delimiter))
  process.env.PATH = `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`;
const kilnCommand = (args: string[]) => shAsync(KILN_BIN, args);
/**
 * The same resize by node and sharp alone (sharp-alone.ts), without the CA bundle node would parse at
 * start-up (bin/kiln defers it for a local run too).
 */
const sharpAlone = (outDir: string, files: string[]) => {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return shAsync(process.execPath, [fileURLToPath(new URL('sharp-alone.js', import.meta.url)), outDir, ...files], { env });
};

/** A photo-like JPEG (gradients and noise), made once into the fixture directory. */
export async function photo(o: BenchOptions, name: string, width: number, height: number, seed = 7): Promise<string> {
  const p = path.join(dir(o.fixDir, 'goals'), name);
  if (existsSync(p)) return p;
  const buf = photoPixels(width, height, seed);
  await sharp(buf, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 92 })
    .toFile(`${p}.tmp`);
  renameSync(`${p}.tmp`, p);
  return p;
}

/**
 * `count` different 2000×1500 photo-like JPEGs for the batch row: the pixels of one photo, each file's
 * rows rotated by a different amount (as costly to decode as `photo()`'s, ~15× quicker to make).
 */
async function batchPhotos(o: BenchOptions, count: number): Promise<string[]> {
  const [width, height] = [2000, 1500];
  let pixels: Buffer | undefined;
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const p = path.join(dir(o.fixDir, 'goals'), `batch3mp-${String(i).padStart(3, '0')}.jpg`);
    files.push(p);
    if (existsSync(p)) continue;
    pixels ??= photoPixels(width, height, 100);
    const cut = Math.floor((i * height) / count) * width * 3;
    await sharp(Buffer.concat([pixels.subarray(cut), pixels.subarray(0, cut)]), { raw: { width, height, channels: 3 } })
      .jpeg({ quality: 92 })
      .toFile(`${p}.tmp`);
    renameSync(`${p}.tmp`, p);
  }
  return files;
}

function photoPixels(width: number, height: number, seed: number): Buffer {
  const buf = Buffer.alloc(width * height * 3);
  for (let i = 0; i < buf.length; i += 3) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const n = (seed >> 16) % 32;
    const x = (i / 3) % width;
    const y = Math.floor(i / 3 / width);
    buf[i] = ((x * 255) / width + n) & 255;
    buf[i + 1] = ((y * 255) / height + n) & 255;
    buf[i + 2] = (128 + Math.sin(x / 40) * 80 + n) & 255;
  }
  return buf;
}

export async function cliStartup(rounds: number): Promise<Row> {
  return row('CLI `kiln --version`', async () => {
    const [node, kiln] = await interleave(rounds, [
      () => void sh(process.execPath, ['-e', '0']),
      () => kilnCommand(['--version']).then(() => undefined),
    ]);
    const k = median(kiln!);
    return {
      kiln: ms(k),
      reference: `\`node -e 0\` ${ms(median(node!))}`,
      ratio: k / median(node!),
      value: k / 1000,
      goal: { on: 'kiln', op: '<=', target: 0.15, unit: 's' },
    };
  });
}

/** `kiln resize in.jpg --width 800` against vipsthumbnail on the same 4000×3000 JPEG, both writing JPEG quality 90. */
export async function cliResize(o: BenchOptions, big: string, rounds: number): Promise<Row> {
  return row('CLI `kiln resize in.jpg --width 800` (4000×3000)', async () => {
    const out = dir(o.outDir, 'goal-resize');
    const [vips, kiln, alone] = await interleave(rounds, [
      () => void sh('vipsthumbnail', [big, '-s', '800x', '-o', path.join(out, 'v.jpg[Q=90]')]),
      () => kilnCommand(['resize', big, '--width', '800', '-o', path.join(out, 'k.jpg'), '--force', '-q']).then(() => undefined),
      () => sharpAlone(out, [big]).then(() => undefined),
    ]);
    const k = median(kiln!);
    const v = median(vips!);
    return {
      kiln: ms(k),
      reference: `vipsthumbnail ${ms(v)}; node + sharp alone ${ms(median(alone!))}`,
      ratio: k / v,
      value: k / v,
      goal: { on: 'ratio', op: '<=', target: 1.3 },
    };
  });
}

/**
 * One `kiln resize *.jpg -o out/` over `count` 3 MP JPEGs against a sequential vipsthumbnail loop, both
 * writing JPEG quality 90 (vipsthumbnail's own default is 75).
 */
export async function cliBatch(o: BenchOptions, count: number, rounds: number): Promise<Row> {
  return row(`CLI batch, ${count} × 3 MP JPEG`, async () => {
    const files = await batchPhotos(o, count);
    const fresh = (name: string) => {
      const d = path.join(o.outDir, name);
      rmSync(d, { recursive: true, force: true });
      return dir(d);
    };
    const check = (d: string) => {
      if (readdirSync(d).length !== count) throw new Error(`${readdirSync(d).length} of ${count} outputs in ${d}`);
    };
    const [kiln, loop, alone] = await interleave(
      rounds,
      [
        async () => {
          const d = fresh('goal-batch-k');
          await kilnCommand(['resize', ...files, '--width', '800', '-o', `${d}/`, '-q']);
          check(d);
        },
        async () => {
          const d = fresh('goal-batch-v');
          await shAsync('sh', ['-c', `for f in "$@"; do vipsthumbnail "$f" -s 800x -o "${d}/%s.jpg[Q=90]"; done`, 'sh', ...files]);
          check(d);
        },
        async () => {
          const d = fresh('goal-batch-s');
          await sharpAlone(d, files);
          check(d);
        },
      ],
      { warmup: false },
    );
    const k = median(kiln!);
    const v = median(loop!);
    return {
      kiln: ms(k),
      reference: `sequential vipsthumbnail loop ${ms(v)}; node + sharp alone ${ms(median(alone!))}`,
      ratio: v / k,
      value: v / k,
      goal: { on: 'ratio', op: '>=', target: 4 },
    };
  });
}

const THREADS = String(Math.max(1, os.availableParallelism?.() ?? os.cpus().length));
const FF = ['-hide_banner', '-nostdin', '-y', '-loglevel', 'error'];

/** A 1080p H.264/AAC clip of `secs` seconds (ffmpeg's testsrc2 and a tone), made once. */
export async function clip1080(o: BenchOptions, secs: number): Promise<string> {
  const p = path.join(dir(o.fixDir, 'goals'), `clip-1920x1080-${secs}s.mkv`);
  if (existsSync(p)) return p;
  const tmp = p.replace(/\.mkv$/, '.tmp.mkv');
  await shAsync('ffmpeg', [
    ...FF,
    ...['-f', 'lavfi', '-i', `testsrc2=size=1920x1080:rate=30:duration=${secs}`],
    ...['-f', 'lavfi', '-i', `sine=frequency=440:duration=${secs}`],
    ...['-c:v', 'libx264', '-preset', 'ultrafast', '-g', '60', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest', tmp],
  ]);
  renameSync(tmp, p);
  return p;
}

/** `kiln convert-video --format mp4` against ffmpeg with the arguments kiln passes (bench/media.ts spells them out too). */
export async function transcode(o: BenchOptions, secs: number, rounds: number): Promise<Row> {
  return row(`transcode ${secs} s 1080p H.264 → MP4 (x264 veryfast)`, async () => {
    const clip = await clip1080(o, secs);
    const out = dir(o.outDir, 'goal-video');
    const args = [
      ...['-i', clip, '-map', '0:v:0', '-map', '0:a:0', '-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p'],
      ...['-threads', THREADS, '-c:a', 'aac', '-b:a', '128k', '-movflags', '+faststart', '-map_metadata', '0'],
    ];
    const [ff, kiln] = await interleave(
      rounds,
      [
        async () => {
          await shAsync('ffmpeg', [...FF, ...args, path.join(out, 'f.mp4')]);
          requireOutput(path.join(out, 'f.mp4'));
        },
        async () => {
          await kilnCli(['convert-video', clip, '--format', 'mp4', '-o', path.join(out, 'k.mp4'), '--force', '-q']);
          requireOutput(path.join(out, 'k.mp4'));
        },
      ],
      { warmup: false },
    );
    const k = median(kiln!);
    const f = median(ff!);
    return {
      kiln: ms(k),
      reference: `ffmpeg, same arguments ${ms(f)}`,
      ratio: k / f,
      value: k / f,
      goal: { on: 'ratio', op: '<=', target: 1.03 },
    };
  });
}
