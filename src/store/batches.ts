/**
 * The store's role for batches and schedules as a client reads and steers them (the HTTP API):
 * listing them, pausing, resuming or aborting a batch, releasing or cancelling a schedule. Their
 * creation is part of `MessageIntake.accept`; the release of schedules whose time has come is
 * the dispatcher's (`SubmitClaims.releaseDue`). The contract every role shares (commits, times)
 * is in `store.ts`.
 */

import type { Recurrence } from '../core/recurrence.js';

export type BatchState = 'active' | 'paused' | 'aborted';
export type ScheduleState = 'scheduled' | 'released' | 'cancelled';

export interface Batch {
  id: number;
  client: string;
  senderId: string;
  reqType: string;
  messageType: string;
  campaignName: string | null;
  state: BatchState;
  total: number;
  /** Messages with a final status or a final submit outcome. */
  processed: number;
  pending: number;
  createdAt: number;
  /** The schedule that holds it, or whose past run it was (a recurring schedule). */
  scheduleId: number | null;
}

/**
 * A schedule. A recurring one (`repeat`) holds the batch of its next run (`batchId`, `runAt`)
 * and stays scheduled until its last run is released; each run is a batch of its own.
 */
export interface Schedule {
  id: number;
  client: string;
  /** The batch its next (or its only) run releases. */
  batchId: number;
  /** When that run is released. */
  runAt: number;
  /** The series; null for a schedule of one run. */
  repeat: Recurrence | null;
  state: ScheduleState;
  createdAt: number;
  /** Runs released so far (send-now included). */
  runs: number;
  /** When the last run was released; null before the first. */
  lastRunAt: number | null;
}

export interface BatchesAndSchedules {
  listBatches(client: string): Promise<Batch[]>;
  getBatch(client: string, batchId: number): Promise<Batch | undefined>;
  /** Returns the batch after the change, or undefined when it does not exist for this client. Aborting fails pending messages. */
  setBatchState(client: string, batchId: number, state: BatchState, now: number): Promise<Batch | undefined>;

  listSchedules(client: string): Promise<Schedule[]>;
  /**
   * released: its messages go now; cancelled: its batch is aborted and its pending messages
   * become FAILED ('schedule cancelled').
   */
  setScheduleState(client: string, scheduleId: number, state: 'released' | 'cancelled', now: number): Promise<Schedule | undefined>;
}
