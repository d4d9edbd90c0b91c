export * from './server.js';
export * from './pages.js';
export * from './routes.js';
