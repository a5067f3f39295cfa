/**
 * What a run left out or assumed (the frames of an animation a still-only tool dropped, tracks a container
 * cannot hold) reaches the caller as the result's `data.warnings`: the CLI prints each as
 * `kiln: FILE: warning: …`, --json and the daemon's job result carry the list.
 */
export function withWarnings(data: Record<string, unknown> | undefined, warnings: readonly string[]): Record<string, unknown> | undefined {
  if (!warnings.length) return data;
  const own = Array.isArray(data?.warnings) ? (data.warnings as unknown[]) : [];
  // A tool that warns through ctx.warn and also returns its own list says each thing once.
  return { ...data, warnings: [...new Set([...own, ...warnings])] };
}
