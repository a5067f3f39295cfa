/**
 * kiln's entry point. Only the command that was asked for is built (a tool's subcommand is made from
 * its declaration on demand), which keeps start-up short for scripts that call kiln thousands of times.
 */
import { type Command, CommanderError } from 'commander';
import { EXIT, KilnError, toKilnError } from '../core/errors.js';
import { closestName } from '../core/settings.js';
import { loadTool, toolIds } from '../tools/lazy.js';
import { findPreset, PRESETS, presetTool } from '../tools/presets.js';
import { restoreCaEnv, trustDeferredCa } from './deferred-ca.js';
import { batchExitCode, expandInputs, parseConcurrency, runLocal, type LocalRunRequest } from './local-runner.js';
import { writePolicy } from './output-naming.js';
import { reportResults } from './report-results.js';
import { runStop, stdoutClosed } from './run-stop.js';
import {
  buildToolCommand,
  camelFlag,
  explicitBooleans,
  inFlagWords,
  settingsFromOptions,
  type ToolCommandOptions,
} from './tool-command.js';
import type { Tool } from '../core/tool.js';

export interface Invocation {
  tool: Tool;
  name: string;
}

/**
 * name → tool: a tool id, or a preset id (presetTool() of its base tool, which fixes its settings).
 * Only that tool's module is loaded (src/tools/lazy.ts).
 */
async function resolveInvocation(name: string): Promise<Invocation | undefined> {
  const tool = await loadTool(name);
  if (tool) return { tool, name };
  const preset = findPreset(name);
  const base = preset && (await loadTool(preset.tool));
  return preset && base ? { tool: presetTool(preset, base), name } : undefined;
}

/**
 * `--json` anywhere before `--`: every failure, usage errors included, also prints one JSON line on
 * stdout, so a script's stdout always parses.
 */
let jsonMode = false;

export function wantsJson(argv: string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).includes('--json');
}

function fail(e: unknown): never {
  const err = toKilnError(e);
  if (jsonMode) process.stdout.write(JSON.stringify({ input: null, ok: false, ...err.toJSON() }) + '\n');
  process.stderr.write(
    `kiln: ${err.message}${err.code === 'INTERNAL' && process.env.KILN_DEBUG ? `\n${(err.cause as Error)?.stack ?? ''}` : ''}\n`,
  );
  process.exit(err.exitCode);
}

async function runToolCommand(inv: Invocation, argv: string[]): Promise<void> {
  const cmd = buildToolCommand(inv.tool, inv.name);
  cmd.exitOverride();
  cmd.showHelpAfterError(`(kiln ${inv.name} --help lists the flags)`);
  // A library item replaces the uploaded input.
  if (argv.some((a) => a === '--file-id' || a.startsWith('--file-id='))) cmd.registeredArguments[0]?.argOptional();
  cmd.configureOutput({ writeErr: (s) => process.stderr.write(s) });
  let parsedInputs: string[] = [];
  let opts: ToolCommandOptions = {};
  cmd.action((inputs: string[], o: ToolCommandOptions) => {
    parsedInputs = inputs ?? [];
    opts = o;
  });
  try {
    cmd.parse(explicitBooleans(inv.tool, argv), { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) commanderFailure(e);
    throw e;
  }
  let settings: Record<string, unknown>;
  try {
    settings = settingsFromOptions(inv.tool, opts);
  } catch (e) {
    fail(inFlagWords(toKilnError(e), inv.tool));
  }
  const extra: Record<string, string[]> = {};
  for (const x of inv.tool.input.extra ?? []) {
    const v = opts[camelFlag(x.flag ?? x.field)];
    if (v !== undefined) extra[x.field] = Array.isArray(v) ? (v as string[]) : [String(v)];
  }
  const inputs = await expandInputs(parsedInputs);
  // A tool driven by its settings that can also take a picture (meme-generator's custom-image mode):
  // the positional input is that picture (`kiln meme-generator cat.jpg …` = `--file cat.jpg`).
  const optionalFile = inv.tool.input.kind === 'none' ? inv.tool.input.extra?.find((x) => x.field === 'file') : undefined;
  if (optionalFile && inputs.length === 1 && !extra.file) extra.file = [inputs.pop()!];
  // Second files may also come as positional inputs (`kiln compare a.png b.png`).
  if (inv.tool.input.kind === 'file') {
    for (const x of inv.tool.input.extra ?? []) {
      if (!extra[x.field] && x.required && inputs.length === 2) extra[x.field] = [inputs.pop()!];
    }
  }
  // Ctrl-C, SIGTERM from timeout(1), xargs or a service manager, and a closed stdout: the run is aborted
  // so its children end and its workspace (temp dir, partial outputs) is removed.
  const stop = runStop();
  let concurrency: number | undefined;
  try {
    concurrency = parseConcurrency(opts.concurrency);
  } catch (e) {
    fail(e);
  }
  const request: LocalRunRequest = {
    tool: inv.tool,
    name: inv.name,
    inputs,
    extra,
    settings,
    output: opts.output,
    json: opts.json,
    quiet: opts.quiet,
    force: opts.force,
    noClobber: writePolicy(opts).clobber === false,
    zip: opts.zip,
    concurrency,
    signal: stop.signal,
    flagWords: true,
  };
  // Remote when asked (--server, KILN_SERVER) or when the profile names a server, unless --local.
  const { readProfileSync, profileName, resolveServer } = await import('./profiles.js');
  const server = opts.local ? undefined : resolveServer({ server: opts.server, profile: opts.profile, insecureHttp: !!opts.insecureHttp });
  // The profile's default output directory stands in for -o DIR/.
  const defaultOut = readProfileSync(profileName(opts.profile)).output;
  if (request.output === undefined && defaultOut) request.output = defaultOut.endsWith('/') ? defaultOut : defaultOut + '/';
  const fileId = opts.fileId as string | undefined;
  if (!server && fileId)
    fail(new KilnError('USAGE_ERROR', "--file-id names an item of a server's library: add --server URL (or log in first)."));
  if (!server && opts.async) fail(new KilnError('USAGE_ERROR', '--async queues the run on a server: add --server URL (or log in first).'));
  // Said once, so nobody wonders where their files went (a logged-in profile sends runs to its server).
  if (server && !opts.quiet) process.stderr.write(`kiln: running on ${server.url} (--local runs on this machine)\n`);
  if (server) await trustDeferredCa();
  const results = server
    ? await (await import('./remote-runner.js')).runRemote({ ...request, server, fileId, async: !!opts.async })
    : await runLocal(request);
  const stopped = stop.exitCode();
  if (stopped !== undefined) {
    // Not process.exit(): native work a cancelled run left running (a whisper.cpp chunk runs to its
    // end) must end before the process does, or its teardown aborts the process (exit 134). Only the
    // AI host holds the process for that; a second Ctrl-C ends it at once.
    process.exitCode = stopped;
    return;
  }
  if (!opts.json) reportResults(results, { quiet: !!opts.quiet });
  process.exitCode = batchExitCode(results);
}

export async function main(argv = process.argv.slice(2)): Promise<void> {
  restoreCaEnv();
  const first = argv[0];
  // The other commands' program (and what they import) loads only when no tool was named.
  const topProgram = async () => (await import('./program.js')).topProgram();
  if (argv.length === 0) {
    // A person at a terminal gets the interactive mode; a script (no TTY) gets the help and status 0.
    if (process.stdin.isTTY && process.stdout.isTTY && !process.env.CI) {
      await trustDeferredCa();
      return (await import('./interactive/run.js')).runInteractive();
    }
    (await topProgram()).outputHelp();
    return;
  }
  jsonMode = wantsJson(argv);
  const inv = first && !first.startsWith('-') ? await resolveInvocation(first) : undefined;
  if (inv) return runToolCommand(inv, argv.slice(1));
  // `kiln help resize` (the command list offers `help [command]`): commander knows only the commands, and
  // printed the general help on stderr with exit 2 for a tool or preset.
  const about = first === 'help' && argv[1] && !argv[1].startsWith('-') ? argv[1] : undefined;
  const helpInv = about ? await resolveInvocation(about) : undefined;
  if (helpInv) return runToolCommand(helpInv, ['--help']);
  // Any other command may reach a server (login, jobs, features install, deploy…).
  await trustDeferredCa();
  const program = await topProgram();
  // An unknown command is an error even with --help (which would print the general help and exit 0).
  if (first && !first.startsWith('-') && !program.commands.some((c) => c.name() === first) && first !== 'help')
    unknownCommand(program, first);
  if (about && !program.commands.some((c) => c.name() === about)) unknownCommand(program, about);
  program.exitOverride();
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    if (e instanceof CommanderError) commanderFailure(e);
    throw e;
  }
}

/** commander has printed its message on stderr; --json adds the line on stdout. Exit 0 only for --help/--version. */
function commanderFailure(e: CommanderError): never {
  if (e.exitCode === 0) process.exit(0);
  if (jsonMode) {
    const message = e.message.replace(/^error: /, '');
    process.stdout.write(JSON.stringify({ input: null, ok: false, error: { code: 'USAGE_ERROR', message } }) + '\n');
  }
  process.exit(EXIT.USAGE);
}

/** `kiln resiz`: the nearest tool, preset or command by edit distance, then exit 2. */
function unknownCommand(program: Command, name: string): never {
  const names = [...toolIds(), ...PRESETS.map((p) => p.id), ...program.commands.map((c) => c.name())];
  const near = closestName(name, names, name.length <= 4 ? 1 : 2);
  fail(
    new KilnError(
      'USAGE_ERROR',
      `Unknown tool or command "${name}".${near ? ` Did you mean ${near}?` : ''} Run \`kiln tools\` to list the tools, \`kiln --help\` for the commands.`,
    ),
  );
}

// `kiln tools | head` closes the pipe early: that is not an error.
// A run under way stops and cleans up first (src/cli/run-stop.ts).
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code !== 'EPIPE') throw e;
  if (!stdoutClosed()) process.exit(process.exitCode ?? 0);
});

main().catch((e) => fail(e));
