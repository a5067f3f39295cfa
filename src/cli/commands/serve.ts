/**
 * `kiln serve`: resolves the configuration, starts the daemon, and on SIGTERM/SIGINT drains it: new work
 * gets 503, running jobs finish for SHUTDOWN_GRACE_S (default 30), the rest are cancelled
 * (daemon-shutdown), the warm engines stop, and the process exits 0. A second signal stops at once.
 * Only JSON log lines go to stdout; the banner and the first admin password go to stderr.
 */
export interface ServeOptions {
  port?: string;
  host?: string;
  dataDir?: string;
  allowOpenNetwork?: boolean;
}

export async function serveCommand(o: ServeOptions): Promise<void> {
  const [{ checkNetworkSafety, resolveConfig }, { buildServer }, { answersSent, drain }] = await Promise.all([
    import('../../../daemon/config.js'),
    import('../../../daemon/server.js'),
    import('../../../daemon/drain.js'),
  ]);
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
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const where =
    typeof address === 'object' && address
      ? `${app.kiln.tls ? 'https' : 'http'}://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
      : String(address);
  process.stderr.write(
    `kiln listening on ${where} (data in ${config.dataDir}, ${app.kiln.store.kind}, auth ${config.authEnabled ? 'on' : 'OFF'})\n`,
  );
  const tls = app.kiln.tls;
  const { isLoopback } = await import('../../../daemon/config.js');
  if (!tls && !isLoopback(config.host))
    process.stderr.write(
      `Warning: plain http on ${config.host}: passwords and API keys cross the network readable. Serve https (TLS_SELF_SIGNED=true, or TLS_CERT_FILE and TLS_KEY_FILE), or bind 127.0.0.1 behind a TLS reverse proxy.\n`,
    );
  // Clients compare this with what `kiln login` shows before pinning a self-signed certificate.
  if (tls)
    process.stderr.write(
      `TLS certificate${tls.selfSigned ? ' (self-signed)' : ''} ${tls.certFile}\nSHA-256 fingerprint: ${tls.fingerprint}\n`,
    );
  const engines = await warmEngines((m) => app.log.warn(m));

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
        .then(() => engines.stop())
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

function shutdownGraceMs(): number {
  const raw = process.env.SHUTDOWN_GRACE_S;
  const s = raw === undefined || raw === '' ? 30 : Number(raw);
  return Number.isFinite(s) && s >= 0 ? s * 1000 : 30_000;
}

/**
 * The daemon keeps its heavy engines warm: the LibreOffice pool starts in the background (the first
 * office conversion then skips the ~8 s cold start) and Chromium stays up between requests.
 * KILN_WARM_ENGINES=false skips the warm-up (small machines). The CLI never warms: it starts lazily.
 */
async function warmEngines(warn: (m: string) => void): Promise<{ stop(): Promise<void> }> {
  const [office, chromium] = await Promise.all([import('../../engines/office.js'), import('../../engines/chromium.js')]);
  chromium.keepChromiumWarm();
  if (!/^(false|0|no|off)$/i.test(process.env.KILN_WARM_ENGINES ?? '')) {
    office.warmOffice().catch((e: Error) => warn(`LibreOffice warm-up failed (office tools start it on demand): ${e.message}`));
  }
  return {
    async stop() {
      await Promise.allSettled([office.shutdownOffice(), chromium.shutdownChromium()]);
    },
  };
}
