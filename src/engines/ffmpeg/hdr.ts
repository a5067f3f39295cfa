/**
 * HDR video (HDR10/PQ, HLG) into formats that have no HDR: a GIF, an animated WebP or a PNG/JPEG frame is
 * shown as sRGB, so the PQ- or HLG-coded BT.2020 values written as they are look washed out (a red of
 * 192,32,32 came out 104,65,44). The frames are tone-mapped to BT.709 first.
 */
import { ffmpegCapabilities } from './capabilities.js';
import type { MediaStream } from './probe.js';

const HDR_TRANSFERS = new Set(['smpte2084', 'arib-std-b67']);

/** The stream's transfer is an HDR one (PQ or HLG). */
export function isHdr(v: MediaStream): boolean {
  return !!v.transfer && HDR_TRANSFERS.has(v.transfer);
}

/**
 * Filters that turn an HDR stream into SDR BT.709 (to linear light at a 100-nit reference, BT.709
 * primaries, mobius tone curve — it keeps tones up to SDR white as they were and rolls off the highlights
 * — back to BT.709 transfer), ending with a comma; '' for SDR input or a build without zscale/tonemap.
 */
export async function toSdrFilters(v: MediaStream): Promise<string> {
  if (!isHdr(v) || !(await ffmpegCapabilities()).tonemap) return '';
  return 'zscale=t=linear:npl=100,format=gbrpf32le,zscale=p=bt709,tonemap=tonemap=mobius:desat=0,zscale=t=bt709:m=bt709:r=tv,format=yuv420p,';
}
