#!/usr/bin/env node
/**
 * The router worker process: consumes the route queue and sends each link to a fetcher's queue (learned choice,
 * probe, or the legacy table). FETCHERS lists the fetchers the fleet runs, so it never routes to one nobody serves.
 */
import { runWorkerMain } from '@crawler/worker-host';

runWorkerMain('router', { router: true, fetchers: [] });
