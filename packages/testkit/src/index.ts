export * from './server.js';
export * from './pages.js';
export * from './routes.js';
export * from './site-graph.js';
export * from './private-services.js';
export * from './changing-site.js';
export * from './revisit-site.js';
export * from './private-cluster.js';
