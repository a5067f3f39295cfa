/**
 * Child processes started by glibc's posix_spawn (through koffi) instead of node's spawn.
 *
 * Why: libuv starts every child with fork(), which copies the page tables of the whole process on the
 * calling thread, the event loop's. Measured with /bin/true (node 20, 22 and 24 alike): spawn() held the
 * loop 1.0 ms at 47 MB resident, 4.2 ms at 156 MB (an idle daemon after some work), 8.6 ms at 262 MB and
 * 27 ms at 893 MB (a daemon with AI models loaded); a merge of 20 PDFs starts 60 qpdf processes.
 * posix_spawn clones without copying them (CLONE_VM | CLONE_VFORK): 0.15–0.18 ms at every size.
 *
 * The child is what node's would be: argv[0] is the command, the program is looked up in the child's
 * PATH, stdin/stdout/stderr are pipes, signal dispositions are reset to their defaults and none is
 * blocked (node ignores SIGPIPE, which an ignored disposition would pass on across exec). Every other
 * descriptor of ours is close-on-exec. Its end is read from SIGCHLD: libuv reaps only the children
 * it started, by pid, so this module reaps its own. 'close' comes once it has been reaped and both
 * output pipes have ended, as node's does.
 *
 * Linux with glibc only (core/libc.ts); elsewhere `loadPosixSpawn` gives null and callers keep node's
 * spawn.
 */
import { EventEmitter } from 'node:events';
import { accessSync, closeSync, constants as fsConstants, statSync } from 'node:fs';
import { Socket } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { isMainThread } from 'node:worker_threads';
import { libc } from './libc.js';

interface Bindings {
  spawn(pid: Buffer, file: string, actions: Buffer, attr: Buffer, argv: (string | null)[], envp: (string | null)[]): number;
  actionsInit(a: Buffer): number;
  actionsDestroy(a: Buffer): number;
  addDup2(a: Buffer, fd: number, to: number): number;
  addChdir: ((a: Buffer, dir: string) => number) | undefined;
  pipe2(fds: Buffer, flags: number): number;
  waitpid(pid: number, status: Buffer, options: number): number;
  attr: Buffer;
}

const O_CLOEXEC = 0o2000000;
const WNOHANG = 1;
/** posix_spawnattr flags: POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK. */
const SPAWN_FLAGS = 0x04 | 0x08;
/** Sizes of glibc's opaque types on 64-bit (80 and 336 bytes), with room to spare. */
const ACTIONS_BYTES = 256;
const ATTR_BYTES = 512;
const SIGSET_BYTES = 128;
/** How often live children are looked at besides their SIGCHLD. */
const REAP_POLL_MS = 500;

const SIGNAL_NAMES = new Map(Object.entries(os.constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

function bind(): Bindings | null {
  // A worker thread hears no signals, so it could not see its children end.
  if (!isMainThread) return null;
  const lib = libc();
  if (!lib) return null;
  try {
    const f = (sig: string) => lib.func(sig);
    const attrInit = f('int posix_spawnattr_init(void *attr)');
    const setFlags = f('int posix_spawnattr_setflags(void *attr, short flags)');
    const setSigDefault = f('int posix_spawnattr_setsigdefault(void *attr, void *set)');
    const setSigMask = f('int posix_spawnattr_setsigmask(void *attr, void *set)');
    const sigfillset = f('int sigfillset(void *set)');
    const sigemptyset = f('int sigemptyset(void *set)');
    let addChdir: Bindings['addChdir'];
    try {
      // glibc 2.29 and later.
      addChdir = f('int posix_spawn_file_actions_addchdir_np(void *actions, const char *dir)') as Bindings['addChdir'];
    } catch {
      addChdir = undefined;
    }
    const attr = Buffer.alloc(ATTR_BYTES);
    const all = Buffer.alloc(SIGSET_BYTES);
    const none = Buffer.alloc(SIGSET_BYTES);
    if (
      attrInit(attr) ||
      sigfillset(all) ||
      sigemptyset(none) ||
      setSigDefault(attr, all) ||
      setSigMask(attr, none) ||
      setFlags(attr, SPAWN_FLAGS)
    )
      return null;
    return {
      spawn: f(
        'int posix_spawn(void *pid, const char *path, void *actions, void *attr, const char **argv, const char **envp)',
      ) as Bindings['spawn'],
      actionsInit: f('int posix_spawn_file_actions_init(void *actions)') as Bindings['actionsInit'],
      actionsDestroy: f('int posix_spawn_file_actions_destroy(void *actions)') as Bindings['actionsDestroy'],
      addDup2: f('int posix_spawn_file_actions_adddup2(void *actions, int fd, int newfd)') as Bindings['addDup2'],
      addChdir,
      pipe2: f('int pipe2(void *fds, int flags)') as Bindings['pipe2'],
      waitpid: f('int waitpid(int pid, void *status, int options)') as Bindings['waitpid'],
      attr,
    };
  } catch {
    return null;
  }
}

/**
 * The program `cmd` names, found as libuv's execvp would in the child's PATH. A path is left as it is:
 * posix_spawn changes directory before it executes, so a relative one starts from the child's cwd.
 */
function resolveProgram(cmd: string, env: NodeJS.ProcessEnv): string | undefined {
  const runnable = (p: string) => {
    try {
      accessSync(p, fsConstants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (cmd.includes('/')) return cmd;
  for (const dir of (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(':')) {
    const p = path.join(dir || '.', cmd);
    if (runnable(p)) return p;
  }
  return undefined;
}

/** A child started here: the parts of node's ChildProcess that exec() uses, with the same events. */
export class SpawnedChild extends EventEmitter {
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  private openPipes = 2;
  private reaped = false;
  private closed = false;

  constructor(
    /** 0 for a child that never started. */
    readonly pid: number,
    readonly stdin: Writable,
    readonly stdout: Readable,
    readonly stderr: Readable,
  ) {
    super();
    for (const s of [stdout, stderr])
      s.once('close', () => {
        this.openPipes--;
        this.settle();
      });
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    // pid 0 (a child that never started) would signal our own process group.
    if (this.reaped || this.pid <= 0) return false;
    try {
      process.kill(this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Called once waitpid has collected the child's status. */
  exited(status: number): void {
    this.reaped = true;
    const sig = status & 0x7f;
    if (sig === 0) this.exitCode = (status >> 8) & 0xff;
    else this.signalCode = SIGNAL_NAMES.get(sig) ?? 'SIGKILL';
    this.emit('exit', this.exitCode, this.signalCode);
    this.settle();
  }

  private settle(): void {
    if (this.closed || !this.reaped || this.openPipes > 0) return;
    this.closed = true;
    this.emit('close', this.exitCode, this.signalCode);
  }
}

export interface PosixSpawner {
  /** undefined when this call needs something posix_spawn cannot give here (a cwd without glibc ≥ 2.29). */
  spawn(cmd: string, args: string[], o: { cwd?: string; env: NodeJS.ProcessEnv }): SpawnedChild | undefined;
}

/** The spawner, or null where posix_spawn cannot be reached (not Linux, not glibc, no koffi). */
export function loadPosixSpawn(): PosixSpawner | null {
  const c = bind();
  if (!c) return null;
  const live = new Map<number, SpawnedChild>();
  const status = Buffer.alloc(4);
  // While a child runs, this timer keeps the process alive as node's child handle does (the SIGCHLD
  // listener is unreferenced: a process whose last pipe just closed would end before the signal came),
  // and looks once more in case two exits were folded into one signal.
  let watch: NodeJS.Timeout | undefined;
  const reap = () => {
    for (const [pid, child] of live) {
      if (c.waitpid(pid, status, WNOHANG) !== pid) continue;
      live.delete(pid);
      child.exited(status.readInt32LE(0));
    }
    if (!live.size && watch) {
      clearInterval(watch);
      watch = undefined;
    }
  };
  process.on('SIGCHLD', reap);

  const pipe = (): [number, number] => {
    const fds = Buffer.alloc(8);
    if (c.pipe2(fds, O_CLOEXEC) !== 0) throw Object.assign(new Error('pipe2 failed'), { code: 'EMFILE' });
    return [fds.readInt32LE(0), fds.readInt32LE(4)];
  };

  return {
    spawn(cmd, args, o) {
      if (o.cwd !== undefined && !c.addChdir) return undefined;
      const program = resolveProgram(cmd, o.env);
      const env = Object.entries(o.env)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${v}`);
      // Descriptors of ours still open: closed here on any failure, handed to sockets on success.
      let open: number[] = [];
      const close = (fds: number[]) => {
        for (const fd of fds) closeSync(fd);
        open = open.filter((fd) => !fds.includes(fd));
      };
      const actions = Buffer.alloc(ACTIONS_BYTES);
      c.actionsInit(actions);
      try {
        const [inR, inW] = pipe();
        open.push(inR, inW);
        const [outR, outW] = pipe();
        open.push(outR, outW);
        const [errR, errW] = pipe();
        open.push(errR, errW);
        c.addDup2(actions, inR, 0);
        c.addDup2(actions, outW, 1);
        c.addDup2(actions, errW, 2);
        if (o.cwd !== undefined) c.addChdir!(actions, o.cwd);
        const pidOut = Buffer.alloc(4);
        const err = program === undefined ? 2 : c.spawn(pidOut, program, actions, c.attr, [cmd, ...args, null], [...env, null]);
        close([inR, outW, errW]);
        if (err !== 0) {
          close([inW, outR, errR]);
          return failed(cmd, args, err);
        }
        const pid = pidOut.readInt32LE(0);
        const child = new SpawnedChild(
          pid,
          new Socket({ fd: inW, readable: false, writable: true }),
          new Socket({ fd: outR, readable: true, writable: false }),
          new Socket({ fd: errR, readable: true, writable: false }),
        );
        open = [];
        live.set(pid, child);
        watch ??= setInterval(reap, REAP_POLL_MS);
        return child;
      } finally {
        c.actionsDestroy(actions);
        for (const fd of open) {
          try {
            closeSync(fd);
          } catch {
            /* already gone */
          }
        }
      }
    },
  };
}

/** A child that never started: its 'error' comes asynchronously, as node's does, with the errno's code. */
function failed(cmd: string, args: string[], errno: number): SpawnedChild {
  const code = Object.entries(os.constants.errno).find(([, n]) => n === errno)?.[0] ?? 'EIO';
  const child = new SpawnedChild(0, new PassThrough(), new PassThrough(), new PassThrough());
  process.nextTick(() =>
    child.emit(
      'error',
      Object.assign(new Error(`spawn ${cmd} ${code}`), { code, errno: -errno, syscall: `spawn ${cmd}`, path: cmd, spawnargs: args }),
    ),
  );
  return child;
}
