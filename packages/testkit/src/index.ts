export * from './server.js';
export * from './pages.js';
export * from './routes.js';
export * from './site-graph.js';
export * from './private-services.js';
export * from './shared-services.js';
