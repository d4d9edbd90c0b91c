export { SIGNATURE_HEADER, EVENT_ID_HEADER, signWebhook, verifyWebhook, type VerifyOptions } from './signature.js';
export { DEFAULT_RETRY_POLICY, nextDelivery, type RetryPolicy } from './backoff.js';
export {
  EventDispatcher,
  eventBody,
  fetchSender,
  type EventDispatcherOptions,
  type RoundResult,
  type StreamTarget,
  type WebhookSender,
  type WebhookTarget,
} from './dispatcher.js';
export { startEventDispatcher, type DispatcherSettings } from './start-dispatcher.js';
