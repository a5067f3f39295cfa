/** `kiln serve`: resolves the configuration, starts the daemon, and stops it cleanly on a signal. */
import type { ServeOptions } from '../src/cli/commands/serve.js';
import { checkNetworkSafety, resolveConfig } from './config.js';
import { buildServer } from './server.js';

export async function serveFromCli(o: ServeOptions): Promise<void> {
  const config = resolveConfig({ port: o.port, host: o.host, dataDir: o.dataDir, allowOpenNetwork: o.allowOpenNetwork });
  checkNetworkSafety(config);
  const app = await buildServer({ ...config, logger: config.logger || process.env.KILN_HTTP_LOG === undefined });
  const { generatedPassword, passwordFile } = app.kiln.bootstrap;
  if (generatedPassword) {
    process.stdout.write(
      `\nCreated the admin user "${config.adminUsername}" with the password:\n\n    ${generatedPassword}\n\n` +
        `It is shown only now and saved in ${passwordFile} (readable only by you). Change it after logging in.\n\n`,
    );
  }
  await app.listen({ port: config.port, host: config.host });
  const address = app.server.address();
  const where =
    typeof address === 'object' && address
      ? `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`
      : String(address);
  process.stdout.write(
    `kiln listening on ${where} (data in ${config.dataDir}, ${app.kiln.store.kind}, auth ${config.authEnabled ? 'on' : 'OFF'})\n`,
  );
  const engines = await warmEngines((m) => app.log.warn(m));

  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (signal: NodeJS.Signals) => {
      if (stopping) {
        // A second signal means "now".
        process.exit(130);
      }
      stopping = true;
      process.stdout.write(`${signal}: stopping…\n`);
      app
        .close()
        .then(() => engines.stop())
        .then(resolve, (e) => {
          process.stderr.write(`error while stopping: ${(e as Error).message}\n`);
          resolve();
        });
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}

/**
 * The daemon keeps its heavy engines warm: the LibreOffice pool starts in the background (the first
 * office conversion then skips the ~8 s cold start) and Chromium stays up between requests.
 * KILN_WARM_ENGINES=false skips the warm-up (small machines). The CLI never warms: it starts lazily.
 */
async function warmEngines(warn: (m: string) => void): Promise<{ stop(): Promise<void> }> {
  const [office, chromium] = await Promise.all([import('../src/engines/office.js'), import('../src/engines/chromium.js')]);
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
