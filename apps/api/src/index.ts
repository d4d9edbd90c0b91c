export { createServer, type ServerDeps } from './server.js';
export { parseApiEnv, type ApiEnv, type BullBoardCredentials } from './env.js';
export { BULL_BOARD_PATH } from './routes/admin.js';
export { summariseHeuristics } from './routes/links.js';
