/** The colour setting of the media tools and its ffmpeg spelling. */
import { z } from 'zod';

/** A colour setting: #rgb or #rrggbb. */
export const colorSetting = (def: string) =>
  z
    .string()
    .regex(/^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/, 'expected a colour like #ff8800')
    .default(def);

/** '#abc' / '#aabbcc' → '0xAABBCC' (ffmpeg colour syntax). */
export function ffColor(hex: string): string {
  let h = hex.replace('#', '');
  if (h.length === 3) h = [...h].map((c) => c + c).join('');
  return '0x' + h.toUpperCase();
}
