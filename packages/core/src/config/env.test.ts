import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, camelCaseEnvName, composeEnv, envGroup, envSchema, intVar, parseEnv, showEnvValue, urlVar, type EnvConfig } from './env.js';

const VARS = {
  DATABASE_URL: urlVar(['postgresql:']),
  FETCH_TIMEOUT_MS: intVar(30_000, 1),
  WEBHOOK_SECRET: z.string().min(16).optional(),
};

describe('envSchema', () => {
  it('yields each variable under its camelCase name, typed from its schema', () => {
    const c = parseEnv(envSchema(VARS), { DATABASE_URL: 'postgresql://h/db', FETCH_TIMEOUT_MS: '5' });
    expect(c).toEqual({ databaseUrl: 'postgresql://h/db', fetchTimeoutMs: 5, webhookSecret: undefined });
    expectTypeOf(c).toEqualTypeOf<EnvConfig<typeof VARS>>();
    expectTypeOf(c.fetchTimeoutMs).toEqualTypeOf<number>();
    expect(camelCaseEnvName('SHUTDOWN_DRAIN_TIMEOUT_MS')).toBe('shutdownDrainTimeoutMs');
  });

  it('reports every bad variable at once, with its name and value, as a ConfigError with the issues as data', () => {
    let err: unknown;
    try {
      parseEnv(envSchema(VARS), { DATABASE_URL: 'mysql://x', FETCH_TIMEOUT_MS: '0' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('invalid_config');
    expect((err as ConfigError).issues.map((i) => i.variable)).toEqual(['DATABASE_URL', 'FETCH_TIMEOUT_MS']);
    expect((err as Error).message).toMatch(/^invalid configuration: DATABASE_URL="mysql:\/\/x": .*; FETCH_TIMEOUT_MS="0": expected an integer >= 1$/);
  });

  it('never shows a secret: the password of a URL, or a variable named as a secret', () => {
    const bad = () => parseEnv(envSchema(VARS), { DATABASE_URL: 'mysql://crawler:s3cr3t-pw@db/x', FETCH_TIMEOUT_MS: 'x', WEBHOOK_SECRET: 'short-secret' });
    expect(bad).toThrow(/DATABASE_URL="mysql:\/\/crawler:\*\*\*@db\/x"/);
    expect(bad).toThrow(/WEBHOOK_SECRET=\(hidden\)/);
    expect(bad).not.toThrow(/s3cr3t-pw|short-secret/);
    expect(showEnvValue('API_KEYS', 'k1,k2')).toBe('(hidden)');
    expect(showEnvValue('BULL_BOARD_PASSWORD', 'pw')).toBe('(hidden)');
    expect(showEnvValue('REDIS_URL', 'redis://:pw@h:6379')).toBe('"redis://:***@h:6379"');
    expect(showEnvValue('DATABASE_URL', 'postgres://u:pw@h:port/db')).toBe('"postgres://u:***@h:port/db"');
    expect(showEnvValue('PORT', undefined)).toBe('(unset)');
  });

  it('masks a password that holds an unescaped @ whole, in proxy lists and in URLs it cannot parse', () => {
    const tiers = '[{"name":"dc","cost":"x","urls":["http://user:p@ss@dc1.example:3128"]}]';
    expect(showEnvValue('PROXY_TIERS', tiers)).toBe(JSON.stringify('[{"name":"dc","cost":"x","urls":["http://***@dc1.example:3128"]}]'));
    expect(showEnvValue('DATABASE_URL', 'postgres://u:p@ss@h:bad-port/db')).toBe('"postgres://u:***@h:bad-port/db"');
    expect(showEnvValue('PROXY_TIERS', 'http://host/a@b')).toBe('"http://host/a@b"');
  });
});

describe('composeEnv', () => {
  const schema = composeEnv({ store: { DATABASE_URL: VARS.DATABASE_URL }, own: { PORT: intVar(3000, 0, 65_535), MODE: z.string().optional() } }, (values, ctx) => {
    if (values.MODE === 'strict' && values.PORT === 3000) ctx.addIssue({ code: 'custom', path: ['PORT'], message: 'set explicitly in strict mode' });
  });

  it('reads several concerns in one pass, each under its own key', () => {
    expect(parseEnv(schema, { DATABASE_URL: 'postgresql://h/db', PORT: '80' })).toEqual({ store: { databaseUrl: 'postgresql://h/db' }, own: { port: 80, mode: undefined } });
  });

  it('runs cross-variable rules even when another variable is bad, so every problem is reported at once', () => {
    expect(() => parseEnv(schema, { DATABASE_URL: 'nope', MODE: 'strict' })).toThrow(/DATABASE_URL="nope": .*; PORT=\(unset\): set explicitly in strict mode/);
  });
});

describe('envGroup', () => {
  const group = envGroup(
    { WORKERS: intVar(0, 0), FETCHERS: z.string().default('a,b') },
    (c) => ({ ...c, workers: c.workers || c.fetchers.split(',').length }),
    (values, ctx) => {
      if (values.FETCHERS.includes(' ')) ctx.addIssue({ code: 'custom', path: ['FETCHERS'], message: 'no spaces' });
    },
  );

  it('computes defaults from other variables and applies its rules, alone or composed', () => {
    expect(parseEnv(envSchema(group), {}).workers).toBe(2);
    expect(parseEnv(composeEnv({ g: group }), { WORKERS: '5' }).g.workers).toBe(5);
    expect(() => parseEnv(envSchema(group), { FETCHERS: 'a, b' })).toThrow(/FETCHERS="a, b": no spaces/);
    expect(() => parseEnv(composeEnv({ g: group, own: { PORT: intVar(1) } }), { FETCHERS: 'a, b' })).toThrow(/no spaces/);
  });
});

describe('redisUrlVar', () => {
  it('takes redis:, rediss: and a unix socket path, and refuses anything else', async () => {
    const { redisUrlVar } = await import('./env.js');
    for (const ok of ['redis://127.0.0.1:6379', 'rediss://h:6380/2', 'unix:///run/redis/redis.sock', 'unix:///tmp/r.sock?db=3']) {
      expect(redisUrlVar().safeParse(ok).success, ok).toBe(true);
    }
    for (const bad of ['http://h:6379', '/tmp/r.sock', '127.0.0.1:6379', '']) expect(redisUrlVar().safeParse(bad).success, bad).toBe(false);
  });
});
