/**
 * `kiln serve`: resolves the configuration, starts the daemon, and on SIGTERM/SIGINT drains it: new work
 * gets 503, running jobs finish for SHUTDOWN_GRACE_S (default 30), the rest are cancelled
 * (daemon-shutdown), the warm engines stop, and the process exits 0. A second signal stops at once.
 * Only JSON log lines go to stdout; the banner and the first admin password go to stderr.
 */
import { KilnError } from '../../core/errors.js';

export interface ServeOptions {
  port?: string;
  host?: string;
  dataDir?: string;
  allowOpenNetwork?: boolean;
}

export async function serveCommand(o: ServeOptions): Promise<void> {
  const [{ checkNetworkSafety, isLoopback, resolveConfig }, { buildServer }, { answersSent, drain }, { steadyHeapGrowth }] =
    await Promise.all([
      import('../../../daemon/config.js'),
      import('../../../daemon/server.js'),
      import('../../../daemon/drain.js'),
      import('../../../daemon/system/heap-growth.js'),
    ]);
  steadyHeapGrowth();
  const config = resolveConfig({ port: o.port, host: o.host, dataDir: o.dataDir, allowOpenNetwork: o.allowOpenNetwork });
  checkNetworkSafety(config);
  const graceMs = shutdownGraceMs();
  const app = await buildServer({ ...config, logger: config.logger || process.env.KILN_HTTP_LOG === undefined });
  const { generatedPassword, passwordFile } = app.kiln.bootstrap;
  if (generatedPassword) {
    process.stderr.write(
      `\nCreated the admin user "${config.adminUsername}" with the password:\n\n    ${generatedPassword}\n\n` +
        `It is shown only now and saved in ${passwordFile} (readable only by you). Change it after logging in.\n\n`,
    );
  }
  // Started before listening, awaited on stop: the signal handlers below must be in place as soon as
  // the listening line is out (a SIGTERM right after it used to kill the process unhandled).
  const engines = warmEngines((m) => app.log.warn(m));
  await app.listen({ port: config.port, host: config.host }).catch(async (e: NodeJS.ErrnoException) => {
    await app.close().catch(() => {});
    await engines.then((x) => x.stop()).catch(() => {});
    throw listenFailure(e, config.host, config.port);
  });
  const address = app.server.address();
  const where =
    typeof address === 'object' && address
      ? `${app.kiln.tls ? 'https' : 'http'}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
      : String(address);
  process.stderr.write(
    `kiln listening on ${where} (data in ${config.dataDir}, ${app.kiln.store.kind}, auth ${config.authEnabled ? 'on' : 'OFF'})\n`,
  );
  const tls = app.kiln.tls;
  if (!tls && !isLoopback(config.host))
    process.stderr.write(
      `Warning: plain http on ${config.host}: passwords and API keys cross the network readable. Serve https (TLS_SELF_SIGNED=true, or TLS_CERT_FILE and TLS_KEY_FILE), or bind 127.0.0.1 behind a TLS reverse proxy.\n`,
    );
  // Clients compare this with what `kiln login` shows before pinning a self-signed certificate.
  if (tls)
    process.stderr.write(
      `TLS certificate${tls.selfSigned ? ' (self-signed)' : ''} ${tls.certFile}\nSHA-256 fingerprint: ${tls.fingerprint}\n`,
    );
  settleStartupHeap();

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) process.exit(130); // A second signal means "now".
      stopping = true;
      process.stderr.write(`${signal}: draining (up to ${graceMs / 1000} s for running jobs)…\n`);
      const deadline = Date.now() + graceMs;
      drain(app, graceMs)
        .then(async (finished) => {
          if (!finished) process.stderr.write('grace period over: cancelling the jobs still running\n');
          // Results of the jobs that finished are still being sent: close() would cut them.
          else await answersSent(app, deadline);
          return app.close();
        })
        .then(() => engines)
        .then((e) => e.stop())
        .then(resolve, (e) => {
          process.stderr.write(`error while stopping: ${(e as Error).message}\n`);
          resolve();
        });
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  process.exitCode = 0;
}

/**
 * Why the daemon cannot listen, as the admin's to fix (USAGE_ERROR): these came out as node's bare
 * `listen EADDRINUSE` or `getaddrinfo ENOTFOUND` with the exit code of an internal error.
 */
function listenFailure(e: NodeJS.ErrnoException, host: string, port: number): unknown {
  const why: Record<string, string> = {
    EADDRINUSE: `port ${port} is already in use on ${host}: stop what uses it or choose another --port (PORT)`,
    EACCES: `listening on port ${port} is not permitted: choose a port above 1023 or grant the right to bind it`,
    EADDRNOTAVAIL: `${host} is no address of this machine: choose another --host (HOST)`,
    ENOTFOUND: `the host name ${host} does not resolve: choose another --host (HOST)`,
  };
  const text = why[e.code ?? ''];
  return text ? new KilnError('USAGE_ERROR', `Cannot listen: ${text}.`, { cause: e }) : e;
}

/**
 * SHUTDOWN_GRACE_S in ms. A bad value is refused at start like every other setting: it used to fall
 * back to 30 s silently, so a typo such as `10m` surfaced only as transcodes cancelled on a restart.
 */
export function shutdownGraceMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SHUTDOWN_GRACE_S;
  if (raw === undefined || raw.trim() === '') return 30_000;
  const s = Number(raw);
  if (!Number.isFinite(s) || s < 0) throw new KilnError('USAGE_ERROR', `SHUTDOWN_GRACE_S must be a number of seconds ≥ 0 (got "${raw}").`);
  return s * 1000;
}

/**
 * The heavy engines (LibreOffice ~150 MB, Chromium) start on first use and stay up between requests
 * until they have been idle for KILN_ENGINE_IDLE_S (default 300; `never` keeps them), so an idle daemon
 * stays small. KILN_WARM_ENGINES=true also starts the LibreOffice pool at boot (the first office
 * conversion then skips the cold start). The CLI never warms: it starts engines lazily.
 */
async function warmEngines(warn: (m: string) => void): Promise<{ stop(): Promise<void> }> {
  const [office, chromium] = await Promise.all([import('../../engines/office.js'), import('../../engines/chromium.js')]);
  const idleMs = engineIdleMs(warn);
  chromium.keepChromiumWarm(idleMs);
  office.setOfficeIdleStop(idleMs);
  if (/^(true|1|yes|on)$/i.test(process.env.KILN_WARM_ENGINES ?? '')) {
    office.warmOffice().catch((e: Error) => warn(`LibreOffice warm-up failed (office tools start it on demand): ${e.message}`));
  }
  return {
    async stop() {
      await Promise.allSettled([office.shutdownOffice(), chromium.shutdownChromium()]);
    },
  };
}

/** KILN_ENGINE_IDLE_S in ms: a number of seconds (default 300), or `never`/`off` for Infinity. */
export function engineIdleMs(warn: (m: string) => void = () => undefined): number {
  const raw = (process.env.KILN_ENGINE_IDLE_S ?? '').trim();
  if (raw === '') return 300_000;
  if (/^(never|off|infinity)$/i.test(raw)) return Number.POSITIVE_INFINITY;
  const s = Number(raw);
  if (Number.isFinite(s) && s >= 0) return s * 1000;
  warn(`KILN_ENGINE_IDLE_S=${raw} is not a number of seconds or "never": using 300`);
  return 300_000;
}

/**
 * Start-up grows V8's heap (the young generation to its cap, bin/kiln's --max-semi-space-size) for
 * ~27 MB of live data, and V8 gives it back only when its memory reducer runs, which an idle daemon may
 * not trigger for a minute or more. fullGc() once start-up is over lets it shrink (the young generation
 * mostly but not always: hence the cap). `KILN_SETTLE_HEAP_MS=0` turns it off.
 */
function settleStartupHeap(): void {
  const ms = Number(process.env.KILN_SETTLE_HEAP_MS ?? 10_000);
  if (!(ms > 0)) return;
  setTimeout(() => {
    import('../../../daemon/system/gc.js').then((m) => m.fullGc()).catch(() => {});
  }, ms).unref();
}
