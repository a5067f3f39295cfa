/**
 * What stops a CLI run (a tool, a pipeline): Ctrl-C, SIGTERM (timeout(1), xargs, a service manager) and a
 * reader that closed stdout (`kiln … -o - | head -c 10`). Each aborts the run's signal, so its child
 * processes are killed and its workspaces removed before the process ends; exiting on the spot left
 * ffmpeg running and the temp files behind.
 */
import { EXIT } from '../core/errors.js';

type Why = 'SIGINT' | 'SIGTERM' | 'EPIPE';

export interface RunStop {
  signal: AbortSignal;
  /** The status to exit with once the run has stopped, or undefined when nothing stopped it. */
  exitCode(): number | undefined;
  /** True when stdout was closed: nothing more is printed. */
  stdoutClosed(): boolean;
}

let onStdoutClosed: (() => void) | undefined;

export function runStop(): RunStop {
  const ac = new AbortController();
  let why: Why | undefined;
  const stop = (w: Why) => {
    why ??= w;
    ac.abort();
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  onStdoutClosed = () => stop('EPIPE');
  return {
    signal: ac.signal,
    exitCode: () => (why === 'SIGINT' ? EXIT.INTERRUPTED : why === 'SIGTERM' ? EXIT.TERMINATED : why === 'EPIPE' ? EXIT.OK : undefined),
    stdoutClosed: () => why === 'EPIPE',
  };
}

/**
 * stdout's EPIPE: stops the run under way and returns true (the run ends and cleans up), or false when
 * no run is under way (`kiln tools | head`: the caller exits at once). A closed pipe is not an error.
 */
export function stdoutClosed(): boolean {
  if (!onStdoutClosed) return false;
  onStdoutClosed();
  return true;
}
