export { RedisPolitenessGate, normalizeDomain, type DomainLimits, type RedisPolitenessGateOptions, type RedisDomainPermit, type RedisGateDecision } from './gate/redis-politeness-gate.js';
export { RobotsCache, type RobotsCacheOptions } from './robots/robots-cache.js';
export { rulesFromFetch, compileRobots, type RobotsFetchResult, type RobotsBrowserNeeded, type RobotsUnreachable, type RobotsRules, type CompiledRobots } from './robots/robots-rules.js';
export { hashTaggedPrefix } from './redis/run-script.js';
export { waitForPermit, withPermit, type WaitForPermitOptions } from './gate/wait-for-permit.js';
export { ShardedPolitenessGate, type ShardedPolitenessGateOptions } from './gate/sharded-politeness-gate.js';
