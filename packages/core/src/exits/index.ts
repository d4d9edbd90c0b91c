export {
  DIRECT_TIER,
  PROXY_PROTOCOLS,
  PROXY_TIERS_SCHEMA,
  FETCHER_COST_UNITS,
  UNKNOWN_FETCHER_COST_UNITS,
  maskProxyUrl,
  redactCredentials,
  parseProxyTiers,
  armKey,
  parseArmKey,
  armCost,
  armAllowed,
  armsOf,
  expectedCostPerSuccess,
  escalationLadder,
  nextArm,
  type Arm,
  type ArmOptions,
  type ExitTier,
} from './exit-tiers.js';
export { rankArms, type ArmScore, type ArmRanking } from './choose-arm.js';
export { applySetCookie, cookieHeaderOf, parseJar, SESSION_COOKIE_TTL_MS, MAX_JAR_COOKIES, MAX_COOKIE_VALUE_CHARS, type CookieJar, type JarCookie } from './session-cookies.js';
