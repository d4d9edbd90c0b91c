export * from '@crawler/worker-host';
