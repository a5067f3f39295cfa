// One line per route module (a fastify plugin taking the app): export { <name>Routes } from './<file>.js';
// Append only; registration order does not matter. Each plugin reads shared services from app.kiln and marks public routes with
// `{ config: { public: true } }`; everything else requires a signed-in user.
export { healthRoutes } from './health.js';
export { authRoutes } from './auth.js';
export { catalogRoutes } from './catalog.js';
export { toolRoutes } from './tools.js';
export { batchRoutes } from './batch.js';
export { jobRoutes } from './jobs.js';
export { downloadRoutes } from './download.js';
export { docsRoutes } from './docs.js';
export { userRoutes } from './users.js';
export { teamRoutes } from './teams.js';
export { mfaRoutes } from './mfa.js';
export { settingsRoutes } from './settings.js';
export { filesRoutes } from './files.js';
export { pipelineRoutes } from './pipelines.js';
export { oidcRoutes } from './oidc.js';
export { samlRoutes } from './saml.js';
export { mcpRoutes } from './mcp.js';
export { watchFolderRoutes } from './watch-folders.js';
export { metricsRoutes } from './metrics.js';
export { featureRoutes } from './features.js';
export { passportPhotoRoutes } from './passport-photo.js';
