#!/usr/bin/env node
/**
 * The fetch worker process: consumes the queues of the fetchers in FETCHERS (each with its concurrency), polite to
 * every domain as one fleet through Redis, robots.txt respected. Scale it by running more of them.
 */
import { runWorkerMain } from '@crawler/worker-host';

runWorkerMain('fetcher', { router: false });
