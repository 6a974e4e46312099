/**
 * The SMPP client as code outside src/ (the bench) may use it: the bind pool, its settings, the
 * submit_sm shape and the codec. eslint.config.js holds it to this.
 */
export type { BindSettings } from './bind.js';
export { buildStatusTable } from './command-status.js';
export { noEngineMetrics } from './engine-metrics.js';
export { submitSmDefaults, type SubmitSmPdu } from './pdu.js';
export { Pool } from './pool.js';
export { decodePdu, encodePdu } from './wire.js';
