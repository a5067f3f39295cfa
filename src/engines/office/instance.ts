/**
 * One warm headless LibreOffice: its own seeded profile (macros locked down), the soffice.bin process with
 * an empty Writer document open, started, restarted and killed here; the pool and conversions are in
 * ../office.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, realpath, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { KilnError } from '../../core/errors.js';
import { exec } from '../../core/process.js';
import { requireEngine } from '../registry.js';

const START_TIMEOUT_MS = 60_000;
/** soffice.bin exits with 81 after it created a fresh profile and expects its launcher to start it again. */
export const EXIT_RESTART = 81;

const MACRO_LOCKDOWN = `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="MacroSecurityLevel" oor:op="fuse"><value>3</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="DisableMacrosExecution" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Security/Scripting"><prop oor:name="BlockUntrustedRefererLinks" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="FirstRun" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Misc"><prop oor:name="UseSystemFileDialog" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Common/Save/Document"><prop oor:name="CreateBackup" oor:op="fuse"><value>false</value></prop></item>
<item oor:path="/org.openoffice.Office.Linguistic/General"><prop oor:name="IsIgnoreControlCharacters" oor:op="fuse"><value>true</value></prop></item>
<item oor:path="/org.openoffice.Office.Update/Jobs/Job/UpdateCheck/Arguments"><prop oor:name="AutoCheckEnabled" oor:op="fuse"><value>false</value></prop></item>
</oor:items>
`;

/** Arguments every soffice.bin call gets: headless, no restore, no logo, no first-start wizard. */
export const COMMON = ['--headless', '--invisible', '--norestore', '--nologo', '--nofirststartwizard', '--nolockcheck'];

export async function officeBinary(): Promise<string> {
  const launcher = await realpath(await requireEngine('libreoffice'));
  // The launcher script (oosplash) would hide the real process from us: run soffice.bin itself so that
  // killing it really stops the instance.
  const bin = path.join(path.dirname(launcher), 'soffice.bin');
  return existsSync(bin) ? bin : launcher;
}

export function officeEnv(profileDir: string): NodeJS.ProcessEnv {
  // TMPDIR inside the profile: LibreOffice's own lu*.tmp files (left behind when a conversion is killed,
  // e.g. on a ZIP bomb) go away with the profile instead of piling up in the daemon's temp dir.
  return {
    ...process.env,
    SAL_USE_VCLPLUGIN: 'svp',
    HOME: profileDir,
    TMPDIR: profileDir,
    OOO_DISABLE_RECOVERY: '1',
    SAL_DISABLE_WATCHDOG: '1',
  };
}

/** The IPC socket LibreOffice creates for a profile (desktop/source/app/officeipcthread.cxx). */
export function pipePath(profileUrl: string): string {
  const digest = createHash('md5').update(Buffer.from(profileUrl, 'utf16le')).digest();
  // LibreOffice prints each byte in hex without zero padding.
  const hash = [...digest].map((b) => b.toString(16)).join('');
  const uid = process.getuid?.() ?? 0;
  return path.join('/tmp', `OSL_PIPE_${uid}_SingleOfficeIPC_${hash}`);
}

export async function seedProfile(profileDir: string): Promise<void> {
  await mkdir(path.join(profileDir, 'user'), { recursive: true });
  await writeFile(path.join(profileDir, 'user', 'registrymodifications.xcu'), MACRO_LOCKDOWN);
}

export class Instance {
  readonly id: number;
  profileDir = '';
  profileUrl = '';
  child: ChildProcess | undefined;
  ready: Promise<void> | undefined;
  busy = false;
  restarts = 0;
  /** Aborted by dispose(): a start-up in progress stops at its next step instead of outliving the pool. */
  private readonly stopping = new AbortController();

  /** `onUp` runs each time the process is up (the pool registers its exit hook then). */
  constructor(
    id: number,
    private readonly onUp: () => void = () => undefined,
  ) {
    this.id = id;
  }

  get alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  get pid(): number | undefined {
    return this.alive ? this.child!.pid : undefined;
  }

  /** `warm`: also run the warm-up conversion (pool start-up); a job that starts an instance is its own warm-up. */
  start(warm = false): Promise<void> {
    if (this.ready && this.alive) return this.ready;
    this.ready = this.launch(warm).catch((e) => {
      this.ready = undefined;
      throw e;
    });
    return this.ready;
  }

  private async launch(warm: boolean): Promise<void> {
    const signal = this.stopping.signal;
    if (!this.profileDir) {
      this.profileDir = await mkdtemp(path.join(tmpdir(), 'kiln-office-'));
      this.profileUrl = pathToFileURL(this.profileDir).href;
      await seedProfile(this.profileDir);
    }
    const bin = await officeBinary();
    const sock = pipePath(this.profileUrl);
    if (signal.aborted) throw new KilnError('CANCELLED', 'LibreOffice is shutting down.');
    if (!existsSync(path.join(this.profileDir, 'user', 'config'))) {
      // A fresh profile makes soffice.bin initialise it and exit with 81 (it expects its launcher to
      // start it again), after its pipe already appeared: do that first pass on its own.
      await exec(bin, [...COMMON, `-env:UserInstallation=${this.profileUrl}`, '--terminate_after_init'], {
        env: officeEnv(this.profileDir),
        timeoutMs: START_TIMEOUT_MS,
        okCodes: [0, EXIT_RESTART],
        signal,
      });
    }
    for (let attempt = 0; attempt < 3; attempt++) {
      // A socket left by a killed instance would make us think the new one is up.
      await unlink(sock).catch(() => undefined);
      if (signal.aborted) throw new KilnError('CANCELLED', 'LibreOffice is shutting down.');
      // A persistent child: spawned directly (not through exec(), which waits for exit) and unref'd so
      // that a CLI run never waits on the warm instance; exit handlers below stop it.
      const child = spawn(bin, [...COMMON, `-env:UserInstallation=${this.profileUrl}`, 'private:factory/swriter'], {
        env: officeEnv(this.profileDir),
        stdio: 'ignore',
      });
      child.unref();
      this.child = child;
      const exited = new Promise<number>((resolve) => child.once('exit', (code, sig) => resolve(code ?? (sig ? 128 : -1))));
      child.once('error', () => undefined);
      let up: 'up' | number;
      try {
        // The poll also ends when the child exits (killed by dispose() too): a poll left running would
        // hold the daemon's event loop, and so its exit, for up to START_TIMEOUT_MS.
        const ended = () => child.exitCode !== null || child.signalCode !== null;
        await waitFor(() => existsSync(sock) || ended(), START_TIMEOUT_MS);
        up = ended() ? await exited : 'up';
      } catch (e) {
        this.kill();
        throw e;
      }
      if (up === 'up') {
        this.onUp();
        if (warm) await this.warmUp(bin);
        return;
      }
      if (up !== EXIT_RESTART) {
        this.kill();
        throw new KilnError('INTERNAL', `LibreOffice did not start (exit ${up}).`);
      }
    }
    throw new KilnError('INTERNAL', 'LibreOffice did not start.');
  }

  /**
   * The first conversion of an instance loads the Writer import and PDF export code (several seconds);
   * doing one tiny conversion at pool start keeps that cost off the first real job.
   */
  private async warmUp(bin: string): Promise<void> {
    // A pool shut down while starting has no profile any more: never fall back to a relative path.
    if (!path.isAbsolute(this.profileDir)) return;
    const dir = path.join(this.profileDir, 'warmup');
    await mkdir(dir, { recursive: true });
    const src = path.join(dir, 'warmup.rtf');
    await writeFile(src, '{\\rtf1\\ansi{\\fonttbl\\f0\\fswiss Helvetica;}\\f0\\pard warm {\\b up}\\par}');
    await exec(
      bin,
      [...COMMON, `-env:UserInstallation=${this.profileUrl}`, '--convert-to', 'pdf:writer_pdf_Export', '--outdir', dir, src],
      {
        env: officeEnv(this.profileDir),
        timeoutMs: START_TIMEOUT_MS,
        signal: this.stopping.signal,
      },
    ).catch(() => undefined);
  }

  kill(): void {
    const c = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }

  async dispose(): Promise<void> {
    // A start-up still running (the daemon stopped during its warm-up) would otherwise go on spawning
    // soffice.bin into a removed profile after the daemon has gone: stop it and wait for it to end.
    this.stopping.abort();
    const starting = this.ready;
    this.kill();
    await starting?.catch(() => undefined);
    if (this.profileDir) await rm(this.profileDir, { recursive: true, force: true }).catch(() => undefined);
    if (this.profileUrl) await unlink(pipePath(this.profileUrl)).catch(() => undefined);
    this.profileDir = '';
  }
}

async function waitFor(cond: () => boolean, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new KilnError('TIMEOUT', 'LibreOffice took too long to start.');
    await new Promise((r) => setTimeout(r, 25));
  }
}
