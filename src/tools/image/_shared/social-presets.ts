/** The 23 social-media sizes of resize.preset (catalog data.socialPresets). */
export const SOCIAL_PRESETS = {
  'instagram-post-square': { width: 1080, height: 1080 },
  'instagram-story': { width: 1080, height: 1920 },
  'instagram-profile': { width: 320, height: 320 },
  'instagram-landscape': { width: 1080, height: 566 },
  'instagram-portrait': { width: 1080, height: 1350 },
  'x-post': { width: 1200, height: 675 },
  'x-header': { width: 1500, height: 500 },
  'x-profile': { width: 400, height: 400 },
  'facebook-post': { width: 1200, height: 630 },
  'facebook-cover': { width: 820, height: 312 },
  'facebook-profile': { width: 170, height: 170 },
  'facebook-event-cover': { width: 1920, height: 1005 },
  'youtube-thumbnail': { width: 1280, height: 720 },
  'youtube-banner': { width: 2560, height: 1440 },
  'youtube-profile': { width: 800, height: 800 },
  'linkedin-post': { width: 1200, height: 627 },
  'linkedin-banner': { width: 1584, height: 396 },
  'linkedin-profile': { width: 400, height: 400 },
  'tiktok-cover': { width: 1080, height: 1920 },
  'tiktok-profile': { width: 200, height: 200 },
  'whatsapp-profile': { width: 500, height: 500 },
  'pinterest-pin': { width: 1000, height: 1500 },
  'threads-post': { width: 1080, height: 1080 },
} as const;

export type SocialPresetId = keyof typeof SOCIAL_PRESETS;
export const SOCIAL_PRESET_IDS = Object.keys(SOCIAL_PRESETS) as [SocialPresetId, ...SocialPresetId[]];
