import { z } from 'zod';
import { defineTool } from '../../../core/tool.js';
import { withPage } from '../../../engines/chromium.js';
import { getSharp } from '../../../engines/sharp.js';
import { outputFile } from '../../_shared/output.js';
import { resolveAllowed } from './html-to-image-page.js';

export { isPrivateAddress, type Pinned, resolveAllowed } from './html-to-image-page.js';

const PRESETS = {
  desktop: { width: 1280, height: 720, mobile: false },
  tablet: { width: 768, height: 1024, mobile: false },
  mobile: { width: 375, height: 812, mobile: true },
} as const;
const MOBILE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

export default defineTool({
  id: 'html-to-image',
  section: 'image',
  group: 'utilities',
  summary: 'Screenshot a web page (URL) in a headless browser.',
  description:
    'Headless Chromium loads the page at a device size and captures the viewport or the full page as PNG, JPG or WebP. ' +
    'URLs that point to loopback, private or link-local addresses are refused (also after redirects and DNS tricks) unless ' +
    'the administrator lists them in KILN_URL_ALLOWLIST (host names or CIDRs, comma separated).',
  input: { kind: 'none' },
  settings: z.object({
    url: z.string().min(1).max(8192).describe('Page to capture.'),
    format: z.enum(['png', 'jpg', 'webp']).default('png').describe('Output format.'),
    quality: z.int().min(1).max(100).default(90).describe('Quality for lossy formats.'),
    fullPage: z.boolean().default(false).describe('Capture the full scrollable page.'),
    devicePreset: z
      .enum(['desktop', 'tablet', 'mobile', 'custom'])
      .default('desktop')
      .describe('desktop 1280x720, tablet 768x1024, mobile 375x812 (mobile UA), custom = viewportWidth/Height.'),
    viewportWidth: z.int().min(320).max(3840).default(1280).describe('Viewport width (devicePreset=custom).'),
    viewportHeight: z.int().min(320).max(2160).default(720).describe('Viewport height (devicePreset=custom).'),
  }),
  needs: { engines: ['chromium'] },
  execution: 'fast',
  batch: false,
  output: 'image (PNG, JPG or WebP)',
  examples: [
    '--url https://example.com -o example.png',
    '--url https://example.com --device-preset mobile --full-page --format jpg -o page.jpg',
  ],
  async run(ctx, _inputs, s) {
    const first = await resolveAllowed(s.url);
    const preset =
      s.devicePreset === 'custom' ? { width: s.viewportWidth, height: s.viewportHeight, mobile: false } : PRESETS[s.devicePreset];
    ctx.progress(10, 'loading');
    const png = await withPage<Uint8Array>(
      {
        viewport: { width: preset.width, height: preset.height },
        deviceScaleFactor: 1,
        isMobile: preset.mobile,
        hasTouch: preset.mobile,
        ...(preset.mobile ? { userAgent: MOBILE_UA } : {}),
      },
      {
        module: new URL('./html-to-image-page.js', import.meta.url).href,
        name: 'capture',
        args: { url: first.url.href, fullPage: s.fullPage, width: preset.width, allowlist: process.env.KILN_URL_ALLOWLIST ?? '' },
      },
      { signal: ctx.signal, timeoutMs: 60_000, progress: (p, stage) => ctx.progress(p, stage) },
    );
    const sharp = await getSharp();
    const host = first.url.hostname.replace(/[^a-z0-9.-]+/gi, '-') || 'page';
    const out = ctx.out(s.format, '', host);
    const img = sharp(Buffer.from(png));
    if (s.format === 'jpg') await img.flatten({ background: '#ffffff' }).jpeg({ quality: s.quality, mozjpeg: true }).toFile(out);
    else if (s.format === 'webp') await img.webp({ quality: s.quality }).toFile(out);
    else await img.png().toFile(out);
    return { outputs: [outputFile(out)] };
  },
});
