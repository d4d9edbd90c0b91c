export * from './site-kinds.js';
export * from './sim-site.js';
export * from './sim-web.js';
export * from './interstitial.js';
export * from './anubis.js';
export * from './block-page.js';
export * from './fastly.js';
export * from './in-place.js';
