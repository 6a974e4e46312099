/** What code outside src/ (the bench) may use of config; eslint.config.js holds it to this. */
export { waitQueueName } from './amqp-schema.js';
export { MAX_PENDING_DELIVERIES_DEFAULT } from './upstream-schema.js';
