/** What code outside src/ (the bench) may use of the event sinks; eslint.config.js holds it to this. */
export { EventDispatcher, type EventMetrics } from './event-dispatcher.js';
export { WebhookClient } from './webhook-client.js';
