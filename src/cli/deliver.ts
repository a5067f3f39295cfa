/**
 * Puts one finished output where the naming rule says (src/cli/output-naming.ts), for local and remote
 * runs alike. A multi-output tool's ZIP (pdf-to-image, split, video-to-frames…) is unpacked into
 * separate files: `-o DIR/`, a numbered pattern (`-o page-%d.png`, `%03d` pads), or without -o a
 * `<stem>-<tool>/` directory; `--zip` or an `-o NAME.zip` keeps the ZIP. Every destination is checked
 * (inputs, --no-clobber) before the first byte is written.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { stem } from '../core/paths.js';
import type { OutputFile, Tool } from '../core/tool.js';
import { conformOutput } from './output-format.js';
import {
  dedupe,
  defaultOutputName,
  type OutputTarget,
  plainName,
  resolveOutputPath,
  writePolicy,
  type WritePolicy,
} from './output-naming.js';
import { writeOutput } from './output-write.js';

export interface DeliverOptions {
  tool: Tool;
  /** Displayed tool name (preset or pipeline id): the `<tool>` of default names. */
  name: string;
  target: OutputTarget;
  /** Every input path of the run: never overwritten without --force. */
  inputs: string[];
  /** The input this output was made from (default name's stem). */
  inputName?: string;
  policy: WritePolicy;
  defaultDir?: string;
  /** --zip: keep a multi-output tool's ZIP whole. */
  zip?: boolean;
  /** Paths already given in this batch (two inputs named alike get `-2`). */
  usedNames: Set<string>;
  /** A default or directory destination that exists already gets the next free number too (`kiln mcp`, `kiln watch`). */
  keepExisting?: boolean;
  workDir: string;
  dataDir: string;
  signal: AbortSignal;
}

/** What a run request says about delivery (LocalRunRequest and RemoteRunRequest have these fields). */
export interface DeliveryRequest {
  tool: Tool;
  name: string;
  inputs: string[];
  extra: Record<string, string[]>;
  force?: boolean;
  noClobber?: boolean;
  defaultDir?: string;
  zip?: boolean;
  /**
   * Destinations claimed across runs (`kiln mcp` and `kiln watch`, whose runs overlap): a default or directory
   * destination that is claimed or exists gets the next free number, so no run replaces another's output.
   */
  claimed?: Set<string>;
  signal: AbortSignal;
}

/**
 * The delivery options every item of one run shares, for the local and the remote runner alike; each
 * item adds its own inputName and workDir. usedNames is the batch's, so it is made here once.
 * An `-o FILE` is checked here, before any work (an input, or an existing file with --no-clobber): it
 * used to be refused only after the run, a two-minute encode thrown away.
 */
export function runDelivery(req: DeliveryRequest, target: OutputTarget, dataDir: string): Omit<DeliverOptions, 'inputName' | 'workDir'> {
  const inputs = [...req.inputs.filter((i) => i !== '-'), ...Object.values(req.extra).flat()];
  const policy = writePolicy({ clobber: !req.noClobber, force: req.force });
  if (target.kind === 'file' && !PATTERN.test(path.basename(target.path!)))
    resolveOutputPath(target, path.basename(target.path!), undefined, inputs, policy);
  return {
    tool: req.tool,
    name: req.name,
    target,
    inputs,
    policy,
    defaultDir: req.defaultDir,
    zip: req.zip,
    usedNames: req.claimed ?? new Set(),
    keepExisting: !!req.claimed,
    dataDir,
    signal: req.signal,
  };
}

/**
 * The order in which the items of a batch are named. Two inputs with one file name (a/x.png, b/x.png)
 * share an output name, and the run that ended first took x.png: which input became x-2.png changed
 * from one run to the next (a rerun could swap them). An item now waits to be named until the last
 * earlier input of the same stem has been named or has failed, so the first on the command line gets
 * x.png. Items whose names cannot collide never wait; an earlier item is always under way (items start
 * in order), so no item waits for one that has not started.
 */
export function namingOrder(labels: readonly (string | null)[]): { turn(i: number): Promise<void>; done(i: number): void } {
  const named = labels.map(() => {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => {
      resolve = r;
    });
    return { promise, resolve };
  });
  const before = new Map<number, number>();
  const last = new Map<string, number>();
  labels.forEach((label, i) => {
    if (label === null || label === '-') return;
    const key = stem(plainName(path.basename(label))).toLowerCase();
    const prev = last.get(key);
    if (prev !== undefined) before.set(i, prev);
    last.set(key, i);
  });
  return {
    turn: (i) => {
      const prev = before.get(i);
      return prev === undefined ? Promise.resolve() : named[prev]!.promise;
    },
    done: (i) => named[i]?.resolve(),
  };
}

export interface Delivered {
  /** The file written, `-`, or for several files their directory or pattern. */
  output: string;
  /** Every file written, when there are several. */
  outputs?: string[];
  /** Size after a format conversion (the output's name asked for another format). */
  processedSize?: number;
}

const PATTERN = /%(\d*)d/;

/** The tool's declared output says "ZIP of …": its ZIP is a set of files, not an archive product. */
export function isMultiOutput(tool: Tool, file: Pick<OutputFile, 'name' | 'contentType'>): boolean {
  return (file.contentType === 'application/zip' || /\.zip$/i.test(file.name)) && /\bZIP of\b/i.test(tool.output);
}

/**
 * Reserves a destination for this batch: two inputs named alike (a/x.png, b/x.png) get x.png and x-2.png
 * in one directory. Synchronous, so parallel items never pick the same name.
 */
function claim(dest: string, renumber: boolean, o: DeliverOptions): string {
  let p = dest;
  const taken = (q: string) => o.usedNames.has(q) || (!!o.keepExisting && existsSync(q));
  if (renumber && taken(p)) {
    const dir = path.dirname(p);
    const name = dedupe(path.basename(p), (n) => taken(path.join(dir, n)));
    p = resolveOutputPath({ kind: 'dir', path: dir }, name, undefined, o.inputs, o.policy);
  }
  o.usedNames.add(p);
  return p;
}

function numbered(pattern: string, n: number): string {
  return pattern.replace(PATTERN, (_, width: string) => String(n).padStart(Number(width) || 0, '0'));
}

export async function deliverOutput(file: OutputFile, o: DeliverOptions): Promise<Delivered> {
  const { target } = o;
  if (target.kind === 'stdout') {
    await writeOutput(file.path, '-', o.signal);
    return { output: '-' };
  }
  const keepZip = o.zip || (target.kind === 'file' && /\.zip$/i.test(target.path!));
  if (!keepZip && isMultiOutput(o.tool, file)) return deliverMany(file, o);
  const toolId = o.tool.input.kind === 'none' ? undefined : o.name;
  // A pattern with one output: the first number.
  const single: OutputTarget =
    target.kind === 'file' && PATTERN.test(path.basename(target.path!)) ? { kind: 'file', path: numbered(target.path!, 1) } : target;
  const dest = claim(
    resolveOutputPath(single, file.name, toolId, o.inputs, o.policy, o.defaultDir, o.inputName),
    single.kind !== 'file',
    o,
  );
  const output =
    single.kind === 'file'
      ? await conformOutput(o.tool, o.name, file, dest, { workDir: o.workDir, dataDir: o.dataDir, signal: o.signal })
      : file;
  const processedSize = output !== file ? (await stat(output.path)).size : undefined;
  await writeOutput(output.path, dest, o.signal);
  return { output: dest, ...(processedSize !== undefined ? { processedSize } : {}) };
}

async function deliverMany(zip: OutputFile, o: DeliverOptions): Promise<Delivered> {
  // Loaded only here: a plain run does not pay for the ZIP reader at start-up.
  const { unzipFiles } = await import('./output-unzip.js');
  const files = await unzipFiles(zip.path, path.join(o.workDir, `unzipped-${randomUUID().slice(0, 8)}`));
  let dests: string[];
  let shown: string;
  if (o.target.kind === 'file') {
    const pattern = o.target.path!;
    // One file in the ZIP (split-pdf --every-n 5 of 5 pages) and -o one.pdf: that file is the answer
    // (it was "writes 1 files here: give -o DIR/ …", exit 2). Another extension still asks for a pattern.
    const only = files.length === 1 && !PATTERN.test(path.basename(pattern)) ? files[0]! : undefined;
    if (only && path.extname(only.name).toLowerCase() === path.extname(pattern).toLowerCase()) {
      const dest = resolveOutputPath({ kind: 'file', path: pattern }, only.name, undefined, o.inputs, o.policy);
      await writeOutput(only.path, dest, o.signal);
      return { output: dest, outputs: [dest] };
    }
    if (!PATTERN.test(path.basename(pattern)))
      throw new KilnError(
        'USAGE_ERROR',
        `${o.name} writes ${files.length} file${files.length === 1 ? '' : 's'} here: give -o DIR/, a numbered name such as -o ${stem(pattern)}-%d${path.extname(pattern) || path.extname(files[0]?.name ?? '')}, or --zip to keep the ZIP.`,
      );
    dests = files.map((f, i) => {
      const p = numbered(pattern, i + 1);
      return resolveOutputPath(
        { kind: 'file', path: path.extname(p) ? p : p + path.extname(f.name) },
        f.name,
        undefined,
        o.inputs,
        o.policy,
      );
    });
    shown = pattern;
  } else {
    const dir =
      o.target.kind === 'dir'
        ? o.target.path!
        : path.resolve(o.defaultDir ?? process.cwd(), stem(defaultOutputName(zip.name, o.name, o.inputName)));
    dests = files.map((f) => claim(resolveOutputPath({ kind: 'dir', path: dir }, f.name, undefined, o.inputs, o.policy), true, o));
    shown = dir + path.sep;
  }
  for (let i = 0; i < files.length; i++) await writeOutput(files[i]!.path, dests[i]!, o.signal);
  return { output: shown, outputs: dests };
}
