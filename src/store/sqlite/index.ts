export { SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export type { GroupCommitStats } from './group-commit.js';
export type { InboundEventPayload, StatusEventPayload } from '../event-payloads.js';
export { SqliteWorkerStore } from './worker-store.js';
