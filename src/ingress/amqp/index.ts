/**
 * The send queue as code outside src/ (the bench) may use it: how the queue ingress declares it,
 * gathers its acks and reads a message on it. eslint.config.js holds it to this.
 */
export { ChannelAcks } from './channel-acks.js';
export { queueAccess } from './queue-identity.js';
export { readSendMessage } from './send-message.js';
export { declareSendQueue } from './send-queue.js';
