/**
 * The store's role for batches and schedules as a client reads and steers them (the HTTP API):
 * listing them, pausing, resuming or aborting a batch, releasing or cancelling a schedule. Their
 * creation is part of `MessageIntake.accept`; the release of schedules whose time has come is
 * the dispatcher's (`SubmitClaims.releaseDue`). The contract every role shares (commits, times)
 * is in `store.ts`.
 */

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
  scheduleId: number | null;
}

export interface Schedule {
  id: number;
  client: string;
  batchId: number;
  runAt: number;
  repeat: string | null;
  state: ScheduleState;
  /** When it was released: its time came, or a send-now; null while scheduled or once cancelled. */
  releasedAt: number | null;
  createdAt: number;
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
