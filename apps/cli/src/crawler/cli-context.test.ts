import { Readable, PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { configFrom, reportingConfigFrom } from './cli-context.js';

const io = (env: Record<string, string>) => ({ stdin: Readable.from([]), stdout: new PassThrough(), stderr: new PassThrough(), env });
const DB = { DATABASE_URL: 'postgresql://postgres@127.0.0.1:5432/x' };

describe('reportingConfigFrom', () => {
  it('logs warnings only by default, where the workers log info', () => {
    expect(reportingConfigFrom(io(DB)).logLevel).toBe('warn');
    expect(configFrom(io(DB)).logLevel).toBe('info');
  });

  it('lets LOG_LEVEL from the environment win', () => {
    expect(reportingConfigFrom(io({ ...DB, LOG_LEVEL: 'debug' })).logLevel).toBe('debug');
    expect(reportingConfigFrom(io({ ...DB, LOG_LEVEL: 'info' })).logLevel).toBe('info');
  });
});
