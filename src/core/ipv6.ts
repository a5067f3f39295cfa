/** IPv6 addresses as numbers, for the checks that must see through their many spellings. */

/** The eight 16-bit groups of an IPv6 address (any spelling, a zone index dropped, a trailing dotted quad included). */
export function ipv6Groups(addr: string): number[] | undefined {
  let a = addr.toLowerCase().split('%')[0]!;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(a);
  if (quad) {
    const [b0, b1, b2, b3] = quad.slice(1).map(Number) as [number, number, number, number];
    a = `${a.slice(0, quad.index)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const halves = a.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const fill = halves.length === 2 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(fill, 0)).fill('0'), ...tail].map((g) => parseInt(g, 16));
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : undefined;
}

/** The IPv4 address two groups hold (an address's last 32 bits). */
export const ipv4Of = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** The IPv4 client an IPv4-mapped address (::ffff:0:0/96) stands for, as an IPv6 socket reports it. */
export function mappedIPv4(g: number[]): string | undefined {
  return g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff ? ipv4Of(g[6]!, g[7]!) : undefined;
}
