export interface ServeOptions {
  port?: string;
  host?: string;
  dataDir?: string;
  allowOpenNetwork?: boolean;
}

export async function serveCommand(o: ServeOptions): Promise<void> {
  const { serveFromCli } = await import('../../../daemon/main.js');
  await serveFromCli(o);
}
